import { describe, expect, it } from 'vitest';
import { readTraceExportSettings } from './trace-export-settings.ts';

describe('readTraceExportSettings (OpenTelemetry variables)', () => {
  it('is off unless an endpoint is set, or when disabled', () => {
    expect(readTraceExportSettings({})).toBeUndefined();
    expect(
      readTraceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      readTraceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
  });

  it('reads the endpoint, headers, service name and sampler', () => {
    expect(
      readTraceExportSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/',
        OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=abc%3D%3D,x-other = two',
        OTEL_SERVICE_NAME: 'llm-gateway',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }),
    ).toEqual({
      endpoint: 'https://otlp.example.com/v1/traces',
      headers: { 'x-honeycomb-team': 'abc==', 'x-other': 'two' },
      serviceName: 'llm-gateway',
      sampler: { sampler: 'parentbased_traceidratio', ratio: 0.25 },
    });
    expect(
      readTraceExportSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces',
      }),
    ).toMatchObject({
      endpoint: 'http://collector:4318/custom/traces',
      serviceName: 'torii',
      sampler: { sampler: 'parentbased_always_on', ratio: 1 },
    });
  });

  it('names the variable of a bad value, and never echoes a header value', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(() => readTraceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL',
    );
    expect(() => readTraceExportSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT: is not a URL',
    );
    expect(() => readTraceExportSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL: torii exports OTLP over HTTP with JSON',
    );
    expect(() => readTraceExportSettings({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow('OTEL_TRACES_SAMPLER');
    expect(() => readTraceExportSettings({ ...base, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1',
    );
    let message = '';
    try {
      readTraceExportSettings({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'secret-token-value' });
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(message).not.toContain('secret-token-value');
  });
});
