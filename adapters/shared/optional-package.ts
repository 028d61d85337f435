import { StartupError } from './startup-error.ts';

/**
 * Whether `error` is the module loader's "not found" for `packageName` itself (Node's and Deno's
 * `ERR_MODULE_NOT_FOUND`, Bun's and bundlers' "Cannot find package/module"), not for something it imports.
 */
export function isMissingPackage(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const namesPackage = message.includes(`'${packageName}'`) || message.includes(`"${packageName}"`);
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return namesPackage;
  return namesPackage && /cannot find (package|module)/i.test(message);
}

/**
 * Loads an optional peer dependency only when a feature needs it. When it is not installed, the error says which
 * package to install and what for, against the setting that asked for the feature, instead of a loader stack trace.
 * `load` holds the literal `import()` so bundlers still see it.
 *
 * @example
 * const { default: postgres } = await importOptionalPackage('postgres', 'DATABASE_URL', 'Postgres', () => import('postgres'));
 */
export async function importOptionalPackage<Module>(
  packageName: string,
  setting: string,
  feature: string,
  load: () => Promise<Module>,
): Promise<Module> {
  try {
    return await load();
  } catch (error) {
    if (!isMissingPackage(error, packageName)) throw error;
    throw new StartupError(
      setting,
      `${feature} needs the package "${packageName}", which is not installed: run \`npm install ${packageName}\``,
      { cause: error },
    );
  }
}
