import type { ConfigCheckReport } from './config-check-report.ts';

/** Deployments listed in full before the text report summarises the rest (a 5,000-entry file stays readable). */
const listedDeployments = 200;

const statusText = {
  set: 'set',
  file: 'set by the file (environment_variables)',
  default: 'not set, default used',
  missing: 'NOT SET',
  optional: 'not set (read only when present)',
} as const;

/**
 * Renders a {@link ConfigCheckReport} as the text `check` prints: the verdict first, then errors, what a LiteLLM file
 * held that was not taken, the model groups and their deployments (secrets masked), routing, and the environment
 * variables read.
 *
 * @example
 * output.write(formatConfigCheckReport(checkGatewayConfig(raw, { source: 'config.yaml', environment: process.env })));
 */
export function formatConfigCheckReport(report: ConfigCheckReport): string {
  const lines: string[] = [];
  const format = report.format === 'litellm' ? 'a LiteLLM proxy config, converted' : 'a torii config';
  const deployments = report.modelGroups.reduce((sum, group) => sum + group.deployments.length, 0);
  const counts = `${report.modelGroups.length} model group(s), ${deployments} deployment(s)`;
  lines.push(
    report.valid
      ? `${report.source}: valid (${format}): ${counts}, ${report.warnings.length} part(s) not taken`
      : `${report.source}: INVALID (${format}): ${report.errors.length} error(s)`,
  );
  if (report.errors.length > 0) {
    lines.push('', 'Errors:');
    for (const error of report.errors) lines.push(`  - ${error}`);
  }
  if (report.warnings.length > 0) {
    lines.push('', 'Not taken from the LiteLLM config:');
    for (const warning of report.warnings) lines.push(`  - ${warning}`);
  }
  if (report.modelGroups.length > 0) {
    lines.push('', 'Model groups:');
    let listed = 0;
    for (const group of report.modelGroups) {
      if (listed >= listedDeployments && group.deployments.length > 0) break;
      const fallbacks = [
        group.fallbacks.length > 0 ? `fallbacks ${group.fallbacks.join(', ')}` : '',
        group.contextWindowFallbacks.length > 0
          ? `context-window fallbacks ${group.contextWindowFallbacks.join(', ')}`
          : '',
        group.contentPolicyFallbacks.length > 0
          ? `content-policy fallbacks ${group.contentPolicyFallbacks.join(', ')}`
          : '',
      ].filter((part) => part !== '');
      lines.push(
        `  ${group.name}  (strategy ${group.strategy}${fallbacks.length > 0 ? `; ${fallbacks.join('; ')}` : ''})`,
      );
      for (const deployment of group.deployments) {
        if (listed >= listedDeployments) break;
        listed++;
        const details = [
          `key ${deployment.apiKey}`,
          deployment.weight !== 1 ? `weight ${deployment.weight}` : '',
          deployment.priority !== undefined ? `priority ${deployment.priority}` : '',
          deployment.rpm !== undefined ? `rpm ${deployment.rpm}` : '',
          deployment.tpm !== undefined ? `tpm ${deployment.tpm}` : '',
          deployment.headers.length > 0 ? `headers ${deployment.headers.join(', ')}` : '',
          ...Object.entries(deployment.options).map(([name, value]) => `${name} ${value}`),
          deployment.origin !== undefined ? `from ${deployment.origin}` : '',
        ].filter((part) => part !== '');
        lines.push(`    - ${deployment.provider} ${deployment.model} at ${deployment.baseURL}`);
        lines.push(`      ${details.join('; ')}`);
      }
    }
    if (listed < deployments)
      lines.push(`  ... ${deployments - listed} more deployment(s) (use --json for all of them)`);
  }
  if (report.routing !== undefined) lines.push('', `Routing: ${JSON.stringify(report.routing)}`);
  if (report.environmentVariables.length > 0) {
    lines.push('', 'Environment variables:');
    for (const variable of report.environmentVariables) {
      const paths =
        variable.paths.length > 3
          ? [...variable.paths.slice(0, 3), `${variable.paths.length - 3} more`]
          : variable.paths;
      lines.push(`  ${variable.name}: ${statusText[variable.status]} (read by ${paths.join(', ')})`);
    }
  }
  return `${lines.join('\n')}\n`;
}
