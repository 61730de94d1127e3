/**
 * Metrics exporter keys (Apache BrokerConfig names and defaults where they exist):
 *   metricsExporterType      DISABLE (default) | PROM. Apache also has OTLP_GRPC and LOG; tsmq
 *                            refuses them with a clear error rather than silently exporting nothing.
 *   metricsPromExporterHost  address of the Prometheus endpoint. Apache's default "" means
 *                            brokerIP1 there; tsmq's default is 127.0.0.1 (only this host can
 *                            scrape) until set.
 *   metricsPromExporterPort  port of the endpoint, default 5557 (Apache); 0 = any free port;
 *                            -1 = no endpoint (tsmq: the exporter is off whatever
 *                            metricsExporterType says, as consolePort=-1 turns the console off;
 *                            Apache has no such value).
 */
import { ConfigError, resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

export const METRICS_CONFIG_SPEC = {
  metricsExporterType: key<string>({
    name: 'metricsExporterType',
    type: 'string',
    default: 'DISABLE',
    doc: 'DISABLE or PROM (Prometheus text on metricsPromExporterHost:metricsPromExporterPort/metrics)',
    validate: (v: string) => (['DISABLE', 'PROM', 'OTLP_GRPC', 'LOG'].includes(v) ? null : 'must be DISABLE or PROM'),
  }),
  metricsPromExporterHost: key<string>({ name: 'metricsPromExporterHost', type: 'string', default: '127.0.0.1', doc: 'address the Prometheus endpoint binds' }),
  metricsPromExporterPort: key<number>({ name: 'metricsPromExporterPort', type: 'number', default: 5557, doc: 'Prometheus endpoint port (0 = any free port, -1 = metrics exporter off)', validate: wholeNumberIn(-1, 65535, 'a port in 0..65535, or -1 for no metrics exporter') }),
} as const;

export interface MetricsConfig {
  /** True when metricsExporterType=PROM and metricsPromExporterPort is not -1. */
  enabled: boolean;
  host: string;
  port: number;
}

/** @throws ConfigError on a bad value, or for OTLP_GRPC / LOG (not supported by tsmq). */
export function resolveMetricsConfig(raw: Record<string, string>): MetricsConfig {
  const c = resolveConfig(METRICS_CONFIG_SPEC, raw);
  if (c.metricsExporterType === 'OTLP_GRPC' || c.metricsExporterType === 'LOG') {
    throw new ConfigError('metricsExporterType', c.metricsExporterType, 'tsmq exports metrics to Prometheus only: use PROM (or DISABLE)');
  }
  return { enabled: c.metricsExporterType === 'PROM' && c.metricsPromExporterPort >= 0, host: c.metricsPromExporterHost || '127.0.0.1', port: c.metricsPromExporterPort };
}
