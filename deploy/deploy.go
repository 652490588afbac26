// Package deploy holds what fargatekit installs into clusters: the Helm
// chart of spread (charts/fargatekit-spread) and the RBAC of scan, fix and
// watch (rbac/). The chart is built into the binary, so that `fargatekit spread
// install --emulator` installs the very chart a cluster gets.
package deploy

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// SpreadChartDir is the chart's directory in the repository.
const SpreadChartDir = "charts/fargatekit-spread"

//go:embed all:charts/fargatekit-spread
var charts embed.FS

// SpreadChart loads the spread chart built into the binary.
func SpreadChart() (*chart.Chart, error) {
	var files []*archive.BufferedFile
	err := fs.WalkDir(charts, SpreadChartDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := charts.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, &archive.BufferedFile{Name: strings.TrimPrefix(p, SpreadChartDir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the spread chart: %w", err)
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading the spread chart: %w", err)
	}
	return ch, nil
}
