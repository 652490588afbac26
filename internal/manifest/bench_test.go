package manifest

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// deployment is the Deployment of BenchmarkCheck (internal/cli/check): 48 lines, 1.7 KB.
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-1-2
  namespace: team-1
  labels: {app: svc-1-2, team: team-1}
spec:
  replicas: 3
  selector:
    matchLabels: {app: svc-1-2}
  template:
    metadata:
      labels: {app: svc-1-2, team: team-1}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: svc-1
      containers:
        - name: app
          image: registry.example.com/team-1/svc:2.0.1
          ports: [{containerPort: 8080, name: http}]
          env:
            - {name: LOG_LEVEL, value: info}
            - {name: DB_HOST, valueFrom: {secretKeyRef: {name: db, key: host}}}
          resources:
            requests: {cpu: 500m, memory: 1Gi}
            limits: {memory: 1Gi}
          readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}
          livenessProbe: {httpGet: {path: /live, port: http}, periodSeconds: 10}
          volumeMounts: [{name: config, mountPath: /etc/svc}]
        - name: proxy
          image: envoyproxy/envoy:v1.31.0
          resources: {requests: {cpu: 100m, memory: 128Mi}}
      volumes:
        - {name: config, configMap: {name: svc-1-2}}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: topology.kubernetes.io/zone
                labelSelector: {matchLabels: {app: svc-1-2}}
`

// BenchmarkParse splits the loader's cost per object: the YAML parser alone
// (the floor no change here can lower), YAML to JSON, and the whole Parse.
func BenchmarkParse(b *testing.B) {
	data := []byte(deployment)
	b.Run("yaml.v3-node", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var n yaml.Node
			if err := yaml.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
		}
	})
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		b.Fatal(err)
	}
	b.Run("to-json-fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := appendJSON(nil, root.Content[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("to-json-library", func(b *testing.B) {
		for b.Loop() {
			if _, err := slowJSON(root.Content[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			Parse("f.yaml", data, func(*object.Object) {}, func(e Error) { b.Fatal(e) })
		}
	})
}
