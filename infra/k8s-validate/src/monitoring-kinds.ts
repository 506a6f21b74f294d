/**
 * The Prometheus operator's kinds infra/k8s/monitoring uses (monitoring.coreos.com/v1, operator 0.70
 * and later), as strict schemas: ServiceMonitor, PodMonitor and PrometheusRule, with the fields of
 * their CRDs that a scrape of the admin ports and a rule file can need.
 */
import { anything, arr, bool, core, int, intOrString, map, obj, str, type SchemaNode } from './custom-resource-schema.ts';

export const MONITORING_API_VERSION = 'monitoring.coreos.com/v1';

/** Prometheus' duration (`30s`, `5m`, `1h30m`, `0`). */
const promDuration = str({ pattern: /^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/ });
const labelName = str({ pattern: /^[a-zA-Z_][a-zA-Z0-9_]*$/ });

const relabel = obj({
  sourceLabels: arr(labelName),
  separator: str(),
  targetLabel: str(),
  regex: str(),
  modulus: int(0),
  replacement: str(),
  action: str({
    enum: ['replace', 'Replace', 'keep', 'Keep', 'drop', 'Drop', 'hashmod', 'HashMod', 'labelmap', 'LabelMap', 'labeldrop', 'LabelDrop', 'labelkeep', 'LabelKeep', 'lowercase', 'Lowercase', 'uppercase', 'Uppercase', 'keepequal', 'KeepEqual', 'dropequal', 'DropEqual'],
  }),
});

/** What a scrape endpoint of either monitor may say. */
const scrapeFields = {
  path: str(),
  scheme: str({ enum: ['http', 'https', 'HTTP', 'HTTPS'] }),
  params: map(arr(str())),
  interval: promDuration,
  scrapeTimeout: promDuration,
  honorLabels: bool,
  honorTimestamps: bool,
  trackTimestampsStaleness: bool,
  enableHttp2: bool,
  followRedirects: bool,
  filterRunning: bool,
  proxyUrl: str(),
  tlsConfig: anything,
  authorization: anything,
  basicAuth: anything,
  oauth2: anything,
  relabelings: arr(relabel),
  metricRelabelings: arr(relabel),
};

const namespaceSelector = obj({ any: bool, matchNames: arr(str()) });

/** The fields every monitor's spec shares, besides its endpoints. */
const monitorFields = {
  selector: core('V1LabelSelector'),
  namespaceSelector,
  jobLabel: str(),
  podTargetLabels: arr(str()),
  sampleLimit: int(0),
  targetLimit: int(0),
  labelLimit: int(0),
  labelNameLengthLimit: int(0),
  labelValueLengthLimit: int(0),
  keepDroppedTargets: int(0),
  scrapeClass: str(),
  scrapeProtocols: arr(str()),
  fallbackScrapeProtocol: str(),
  attachMetadata: obj({ node: bool }),
  bodySizeLimit: str(),
};

function resource(spec: SchemaNode): SchemaNode {
  return obj({ apiVersion: str(), kind: str(), metadata: core('V1ObjectMeta'), spec }, ['spec']);
}

export const SERVICE_MONITOR = resource(
  obj({ ...monitorFields, targetLabels: arr(str()), endpoints: arr(obj({ ...scrapeFields, port: str(), targetPort: intOrString, bearerTokenSecret: anything }), 1) }, ['selector', 'endpoints']),
);

export const POD_MONITOR = resource(
  obj({ ...monitorFields, podMetricsEndpoints: arr(obj({ ...scrapeFields, port: str(), portNumber: int(1, 65_535), targetPort: intOrString }), 1) }, ['selector', 'podMetricsEndpoints']),
);

const rule = obj(
  {
    record: str({ pattern: /^[a-zA-Z_:][a-zA-Z0-9_:]*$/ }),
    alert: str({ pattern: /^[a-zA-Z_][a-zA-Z0-9_]*$/ }),
    expr: intOrString,
    for: promDuration,
    keep_firing_for: promDuration,
    labels: map(str()),
    annotations: map(str()),
  },
  ['expr'],
);

export const PROMETHEUS_RULE = resource(
  obj(
    {
      groups: arr(
        obj(
          { name: str(), interval: promDuration, query_offset: promDuration, limit: int(0), partial_response_strategy: str(), labels: map(str()), rules: arr(rule) },
          ['name'],
        ),
      ),
    },
    [],
  ),
);
