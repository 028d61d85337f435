import { ConfigError } from './config-error.ts';
import { convertLiteLLMConfig, isLiteLLMConfig } from './litellm-config.ts';

/** The formats a config file may be written in. */
export type ConfigFormat = 'torii' | 'litellm';

/** A parsed config file made ready for `parseGatewayConfig`: torii's shape, whichever format it was written in. */
export interface PreparedConfigInput {
  format: ConfigFormat;
  /** torii's raw config (`${NAME}` references not yet substituted). */
  raw: unknown;
  /** The environment `${NAME}` references are read from (a LiteLLM file's `environment_variables` under the process's). */
  environment: Record<string, string | undefined>;
  /** What a LiteLLM file held that torii did not take, each `<path>: not taken (<why>)`; empty for torii's format. */
  warnings: string[];
  /** For a LiteLLM file: torii deployment paths -> the `model_list` entry each came from. */
  origins: Record<string, string>;
}

/**
 * Recognises a LiteLLM proxy config (a top-level `model_list`) and converts it; a torii config passes through. A
 * LiteLLM file with problems throws a {@link ConfigError} naming each by its LiteLLM path. Used by every runtime's
 * loader and by the `check` command, so they agree on what a file means.
 *
 * @example
 * const input = prepareConfigInput(parseYaml(text), process.env);
 * for (const warning of input.warnings) console.warn(warning);
 * const config = parseGatewayConfig(input.raw, input.environment);
 */
export function prepareConfigInput(
  raw: unknown,
  environment: Readonly<Record<string, string | undefined>>,
): PreparedConfigInput {
  const { problems, ...input } = convertConfigInput(raw, environment);
  if (problems.length > 0) throw new ConfigError(problems);
  return input;
}

/**
 * {@link prepareConfigInput} without throwing: a LiteLLM file's problems are returned beside what was converted
 * (the `check` command reports both).
 */
export function convertConfigInput(
  raw: unknown,
  environment: Readonly<Record<string, string | undefined>>,
): PreparedConfigInput & { problems: string[] } {
  if (!isLiteLLMConfig(raw))
    return { format: 'torii', raw, environment: { ...environment }, warnings: [], origins: {}, problems: [] };
  const conversion = convertLiteLLMConfig(raw);
  const merged: Record<string, string | undefined> = { ...conversion.environment };
  for (const [name, value] of Object.entries(environment))
    if (value !== undefined && value !== '') merged[name] = value;
  return {
    format: 'litellm',
    raw: conversion.config,
    environment: merged,
    warnings: conversion.warnings,
    origins: conversion.origins,
    problems: conversion.problems,
  };
}

/**
 * Names the LiteLLM entry a torii problem is about: `modelGroups.gpt-4o.deployments[1].baseURL: ...` gains
 * ` (from model_list[3])`. Problems about no converted deployment are returned unchanged.
 */
export function withLiteLLMOrigin(problem: string, origins: Readonly<Record<string, string>>): string {
  const separator = problem.indexOf(': ');
  const path = separator === -1 ? problem : problem.slice(0, separator);
  const match = /^(.*\.deployments\[\d+\])/.exec(path)?.[1];
  const origin = match === undefined ? undefined : origins[match];
  return origin === undefined ? problem : `${path} (from ${origin})${problem.slice(path.length)}`;
}
