/**
 * Whether a parsed config file is a LiteLLM proxy config rather than torii's: a top-level `model_list` list and no
 * `modelGroups`. This is how `TORII_CONFIG=litellm-config.yaml` is recognised without a flag.
 */
export function isLiteLLMConfig(raw: unknown): boolean {
  return (
    typeof raw === 'object' &&
    raw !== null &&
    !Array.isArray(raw) &&
    Array.isArray((raw as { model_list?: unknown }).model_list) &&
    !('modelGroups' in raw)
  );
}
