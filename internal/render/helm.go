package render

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/manifest"
)

// notes is the template Helm prints after an install rather than applying.
const notes = "NOTES.txt"

// chartDir renders the chart in dir, whose files must stay within root.
func (o *Options) chartDir(dir, root string) ([]Document, error) {
	if err := confineDir(dir, root); err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	docs, err := o.render(ch, source{prefix: dir})
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", dir, err)
	}
	return docs, nil
}

// chartArchive renders the packaged chart in file, a gzipped tar archive
// with a Chart.yaml in its base directory (isChartArchive).
func (o *Options) chartArchive(file string) ([]Document, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", file, err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	ch, err := loader.LoadArchive(f)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", file, err)
	}
	docs, err := o.render(ch, source{prefix: file + ":" + ch.Name(), archive: true})
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", file, err)
	}
	return docs, nil
}

// confineDir returns an error when dir, or a file or directory below it as
// Helm's loader walks it (following links), leads out of root. Helm follows
// a link wherever it goes, and a template can print a file of the chart
// ({{ fail (.Files.Get "x") }}): the check is made before the chart loads.
func confineDir(dir, root string) error {
	seen := map[string]bool{}
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := manifest.Confine(root, dir); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || seen[real] {
			return err // a directory reached twice through links is walked once
		}
		seen[real] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case e.Type()&fs.ModeSymlink != 0:
				if err := manifest.Confine(root, p); err != nil {
					return err
				}
				if info, err := os.Stat(p); err == nil && info.IsDir() {
					if err := walk(p); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return walk(dir)
}

// isChartArchive reports whether file is a gzipped tar archive holding a
// chart: a Chart.yaml one directory deep, as `helm package` writes it. A file
// that is not a gzipped tar archive is not one; an error is returned only
// when the file cannot be read.
func isChartArchive(file string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", file, err)
	}
	defer func() { _ = f.Close() }() // read-only: a close error loses nothing
	gz, err := gzip.NewReader(f)
	if err != nil {
		return false, nil
	}
	tr := tar.NewReader(io.LimitReader(gz, archive.MaxDecompressedChartSize))
	for {
		h, err := tr.Next()
		if err != nil {
			return false, nil // the end, or not a tar archive
		}
		name := strings.ReplaceAll(h.Name, "\\", "/")
		if dir, base, ok := strings.Cut(strings.TrimPrefix(name, "./"), "/"); ok && dir != "" && base == "Chart.yaml" {
			return true, nil
		}
	}
}

// render renders a loaded chart as `helm template` does, without contacting
// a cluster; src says where the chart's files are.
func (o *Options) render(ch *chart.Chart, src source) ([]Document, error) {
	switch ch.Metadata.Type {
	case "", "application":
	default:
		return nil, fmt.Errorf("%s charts are not installable", ch.Metadata.Type)
	}
	if missing := missingDependencies(ch); len(missing) > 0 {
		return nil, fmt.Errorf("dependencies in Chart.yaml but missing from charts/ (run helm dependency build): %s", strings.Join(missing, ", "))
	}
	name := o.ReleaseName
	if name == "" {
		name = DefaultReleaseName
	}
	if err := chartutil.ValidateReleaseName(name); err != nil {
		return nil, fmt.Errorf("release name %q: %w", name, err)
	}
	namespace := o.Namespace
	if namespace == "" {
		namespace = "default"
	}
	caps := common.DefaultCapabilities.Copy()
	if o.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(o.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("parsing Kubernetes version %q: %w", o.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if c := ch.Metadata.KubeVersion; c != "" && !chartutil.IsCompatibleRange(c, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion %s, which is incompatible with Kubernetes %s", c, caps.KubeVersion.Version)
	}

	// Where each template came from, recorded before ProcessDependencies
	// replaces aliased subcharts with copies (which share the templates).
	sources := map[*common.File]string{}
	recordSources(ch, src, sources)

	vals, err := o.values()
	if err != nil {
		return nil, err
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, fmt.Errorf("processing dependencies: %w", err)
	}
	release := common.ReleaseOptions{Name: name, Namespace: namespace, Revision: 1, IsInstall: true}
	renderValues, err := util.ToRenderValuesWithSchemaValidation(ch, vals, release, caps, false)
	if err != nil {
		return nil, err
	}
	var e engine.Engine // no client: lookup finds nothing, as in helm template
	rendered, err := e.RenderWithContext(context.Background(), ch, renderValues)
	if err != nil {
		return nil, err
	}

	files := map[string]string{}
	templateFiles(ch, sources, files)
	keys := make([]string, 0, len(rendered))
	for k := range rendered {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var docs []Document
	for _, k := range keys {
		out := rendered[k]
		if path.Base(k) == notes || strings.TrimSpace(out) == "" {
			continue
		}
		file, ok := files[k]
		if !ok { // not expected: name it as Helm does, under the chart
			_, rest, _ := strings.Cut(k, "/")
			file = src.join(rest)
		}
		docs = append(docs, Document{File: file, Data: []byte(out)})
	}
	return docs, nil
}

// values merges the values given on the command line as `helm template`
// does (helm's values.Options.MergeValues): the --values files in order,
// then --set, --set-string and --set-file. It uses the same parts of the Helm
// SDK rather than MergeValues itself, whose URL getters would bring Helm's
// plugin runtime and registry client into fargatekit; values files are
// local files.
func (o *Options) values() (map[string]any, error) {
	base := map[string]any{}
	for _, file := range o.ValuesFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading values: %w", err)
		}
		vals, err := loader.LoadValues(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("reading values from %s: %w", file, err)
		}
		base = loader.MergeMaps(base, vals)
	}
	for _, v := range o.Set {
		if err := strvals.ParseInto(v, base); err != nil {
			return nil, fmt.Errorf("parsing --set %s: %w", v, err)
		}
	}
	for _, v := range o.SetString {
		if err := strvals.ParseIntoString(v, base); err != nil {
			return nil, fmt.Errorf("parsing --set-string %s: %w", v, err)
		}
	}
	for _, v := range o.SetFile {
		read := func(rs []rune) (any, error) {
			data, err := os.ReadFile(string(rs))
			return string(data), err
		}
		if err := strvals.ParseIntoFile(v, base, read); err != nil {
			return nil, fmt.Errorf("parsing --set-file %s: %w", v, err)
		}
	}
	return base, nil
}

// missingDependencies lists the dependencies Chart.yaml declares that are
// not in charts/; `helm template` refuses to render without them.
func missingDependencies(ch *chart.Chart) []string {
	var missing []string
	for _, req := range ch.Metadata.Dependencies {
		if !slices.ContainsFunc(ch.Dependencies(), func(d *chart.Chart) bool { return d.Name() == req.Name }) {
			missing = append(missing, req.Name)
		}
	}
	return missing
}

// source is where a loaded chart's files are: a directory, or a directory
// inside a packaged chart (shop-1.0.0.tgz:shop).
type source struct {
	prefix  string
	archive bool // prefix is inside an archive: join with slashes
}

func (s source) join(elem ...string) string {
	if s.archive {
		return s.prefix + "/" + path.Join(elem...)
	}
	return filepath.Join(s.prefix, filepath.FromSlash(path.Join(elem...)))
}

// recordSources maps every template of ch and its subcharts to the file it
// was read from.
func recordSources(ch *chart.Chart, src source, files map[*common.File]string) {
	for _, t := range ch.Templates {
		files[t] = src.join(t.Name)
	}
	for _, dep := range ch.Dependencies() {
		recordSources(dep, subchartSource(ch, src, dep), files)
	}
}

// subchartSource finds the entry of parent's charts/ directory that dep was
// loaded from: a directory whose Chart.yaml names dep, or the archive `helm
// dependency build` names <name>-<version>.tgz. Else it assumes charts/<name>.
func subchartSource(parent *chart.Chart, src source, dep *chart.Chart) source {
	for _, f := range parent.Raw {
		rest, ok := strings.CutPrefix(f.Name, "charts/")
		if !ok {
			continue
		}
		entry, file, inDir := strings.Cut(rest, "/")
		switch {
		case inDir && file == "Chart.yaml":
			var meta struct {
				Name string `json:"name"`
			}
			if yaml.Unmarshal(f.Data, &meta) == nil && meta.Name == dep.Name() {
				return source{prefix: src.join("charts", entry), archive: src.archive}
			}
		case !inDir && entry == dep.Name()+"-"+dep.Metadata.Version+".tgz":
			return source{prefix: src.join("charts", entry) + ":" + dep.Name(), archive: true}
		}
	}
	return source{prefix: src.join("charts", dep.Name()), archive: src.archive}
}

// templateFiles maps the names the engine gives rendered templates (the
// chart's full path, then the template's) to the files they were read from.
func templateFiles(ch *chart.Chart, sources map[*common.File]string, out map[string]string) {
	for _, t := range ch.Templates {
		if file, ok := sources[t]; ok {
			out[path.Join(ch.ChartFullPath(), t.Name)] = file
		}
	}
	for _, dep := range ch.Dependencies() {
		templateFiles(dep, sources, out)
	}
}
