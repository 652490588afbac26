// Package benchcorpus writes the corpus the check benchmarks and the
// side-by-side comparison with pluto and kube-linter run on
// (docs/benchmarks.md): files of realistic Deployments.
package benchcorpus

import (
	"fmt"
	"os"
	"path/filepath"
)

// Deployment is a realistic 48-line Deployment (resources, probes, env, a
// volume, zone anti-affinity); %[1]d is the team, %[2]d the service.
const Deployment = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-%[1]d-%[2]d
  namespace: team-%[1]d
  labels: {app: svc-%[1]d-%[2]d, team: team-%[1]d}
spec:
  replicas: 3
  selector:
    matchLabels: {app: svc-%[1]d-%[2]d}
  template:
    metadata:
      labels: {app: svc-%[1]d-%[2]d, team: team-%[1]d}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: svc-%[1]d
      containers:
        - name: app
          image: registry.example.com/team-%[1]d/svc:%[2]d.0.1
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
        - {name: config, configMap: {name: svc-%[1]d-%[2]d}}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: topology.kubernetes.io/zone
                labelSelector: {matchLabels: {app: svc-%[1]d-%[2]d}}
`

// Write writes files files of perFile Deployments each into dir, named
// team-NNNN.yaml.
func Write(dir string, files, perFile int) error {
	for f := range files {
		var data []byte
		for w := range perFile {
			data = fmt.Appendf(data, Deployment, f, w)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("team-%04d.yaml", f)), data, 0o644); err != nil {
			return fmt.Errorf("writing the corpus: %w", err)
		}
	}
	return nil
}
