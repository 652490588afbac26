// Package deploy holds what fargatekit installs into clusters: the Helm
// charts of spread (charts/fargatekit-spread) and watch
// (charts/fargatekit-watch), and the RBAC of scan, fix and watch (rbac/);
// and installs a chart with the Helm SDK. The charts are built into the
// binary, so that `fargatekit spread install --emulator` and `fargatekit
// watch install --emulator` install the very chart a cluster gets.
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

// The charts' directories in the repository.
const (
	SpreadChartDir = "charts/fargatekit-spread"
	WatchChartDir  = "charts/fargatekit-watch"
)

//go:embed all:charts/fargatekit-spread all:charts/fargatekit-watch
var charts embed.FS

// SpreadChart loads the spread chart built into the binary.
func SpreadChart() (*chart.Chart, error) { return Chart(SpreadChartDir) }

// WatchChart loads the watch chart built into the binary.
func WatchChart() (*chart.Chart, error) { return Chart(WatchChartDir) }

// Chart loads the chart of dir (SpreadChartDir, WatchChartDir) built into
// the binary.
func Chart(dir string) (*chart.Chart, error) {
	var files []*archive.BufferedFile
	err := fs.WalkDir(charts, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := charts.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, &archive.BufferedFile{Name: strings.TrimPrefix(p, dir+"/"), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the chart %s: %w", dir, err)
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading the chart %s: %w", dir, err)
	}
	return ch, nil
}
