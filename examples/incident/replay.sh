#!/usr/bin/env bash
# Replays the incident of examples/incident on a running emulator started
# with examples/emulator/incident/cluster.yaml (kubectl and the AWS CLI
# pointed at it: eval "$(fargatekit emulator env ...)"). It deploys the shop,
# then merges the four per-namespace Fargate profiles into one the way the
# Terraform apply did it: the four deletions first, then the creation.
set -euo pipefail
cd "$(dirname "$0")"
cluster=${CLUSTER:-shop}
namespaces=(orders payments catalog shipping)

for ns in "${namespaces[@]}"; do
	kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
done
kubectl apply -f manifests/ >/dev/null
kubectl wait deployment --all -A --for=condition=Available --timeout=60s >/dev/null
echo "the shop runs on Fargate, one profile per namespace"

# EKS takes one profile operation at a time per cluster: wait for each.
for p in "${namespaces[@]}"; do
	aws eks delete-fargate-profile --cluster-name "$cluster" --fargate-profile-name "$p" >/dev/null
	while aws eks describe-fargate-profile --cluster-name "$cluster" --fargate-profile-name "$p" >/dev/null 2>&1; do sleep 1; done
done
aws eks create-fargate-profile --cluster-name "$cluster" --fargate-profile-name apps \
	--pod-execution-role-arn arn:aws:iam::111122223333:role/fargate \
	--selectors "${namespaces[@]/#/namespace=}" >/dev/null
until [ "$(aws eks describe-fargate-profile --cluster-name "$cluster" --fargate-profile-name apps \
	--query fargateProfile.status --output text)" = ACTIVE ]; do sleep 1; done
echo "profiles merged into apps (deleted first): the pods were recreated on EC2 nodes, and stay there"
