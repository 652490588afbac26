package render

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/fargatekit/fargatekit/internal/manifest"
)

// DefaultReleaseName is the release name charts are rendered with unless
// --release-name says otherwise.
const DefaultReleaseName = "release"

// Options are the rendering settings users give on the command line.
type Options struct {
	ValuesFiles []string      // -f/--values (repeatable)
	Set         []string      // --set (repeatable), Helm syntax
	SetString   []string      // --set-string (repeatable), Helm syntax
	SetFile     []string      // --set-file (repeatable), Helm syntax
	ReleaseName string        // --release-name (default "release")
	Namespace   string        // the release namespace: the check command's -n/--namespace value
	KubeVersion string        // Capabilities.KubeVersion for charts, e.g. "1.35" (the check's --target-version)
	AllowRemote bool          // --allow-remote: kustomizations may name resources by URL
	Timeout     time.Duration // --render-timeout: the longest one chart or kustomization renders; 0 means DefaultTimeout
	MaxOutput   int64         // the most bytes one chart or kustomization renders; 0 means manifest.DefaultMaxFileSize
}

// DefaultTimeout is how long one chart or kustomization may take to render
// unless --render-timeout says otherwise: a large chart renders in a second.
const DefaultTimeout = time.Minute

// Document is one rendered file's worth of YAML.
type Document = manifest.Document

// AddFlags registers the flags that set o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&o.ValuesFiles, "values", "f", nil, "Helm values file for the charts among the inputs (repeatable; later files win)")
	fs.StringArrayVar(&o.Set, "set", nil, "Helm value for the charts among the inputs: key1=val1,key2=val2 (repeatable; overrides --values)")
	fs.StringArrayVar(&o.SetString, "set-string", nil, "Helm value kept as a string: key1=val1,key2=val2 (repeatable)")
	fs.StringArrayVar(&o.SetFile, "set-file", nil, "Helm value read from a file: key1=path1,key2=path2 (repeatable)")
	fs.StringVar(&o.ReleaseName, "release-name", DefaultReleaseName, "Helm release name the charts among the inputs are rendered with")
	fs.BoolVar(&o.AllowRemote, "allow-remote", false, "let kustomizations among the inputs fetch resources and bases by URL (git, HTTP); off, they are refused")
	fs.DurationVar(&o.Timeout, "render-timeout", DefaultTimeout, "the longest a chart or kustomization among the inputs may take to render")
}

// Expand renders path when it is a Helm chart directory (has Chart.yaml), a
// packaged chart (a .tgz or .tar.gz file containing a chart), or a Kustomize
// directory (has kustomization.yaml, kustomization.yml or Kustomization);
// handled is false for anything else. A directory that is both a chart and a
// kustomization is rendered as a chart.
//
// A chart is rendered as `helm template` does, without a cluster: its
// subcharts in charts/ included, values from the chart, --values files and
// --set flags merged in that order, hooks included, NOTES.txt and empty
// renders left out. There is one Document per rendered template, named after
// the template's file: charts/shop/templates/deployment.yaml for a chart
// given as charts/shop, charts/shop/charts/redis/templates/statefulset.yaml
// for its subchart, shop-1.0.0.tgz:shop/templates/deployment.yaml inside a
// packaged chart. The lines of objects and findings count within that
// template's rendered output, not within the template's source.
//
// A kustomization is built as `kustomize build` does. There is one Document
// per object, named after the file that declared the object (its origin, even
// in a base), or after the kustomization file for objects it generated; the
// lines count within the object as kustomize wrote it.
//
// An input that cannot be rendered returns an error naming it and, as the
// libraries report them, the template or file at fault.
//
// What is rendered stays within root (manifest.Root): a chart with a file or
// directory that is a link out of it, or a kustomization that reads a file
// out of it, is refused with an error that names the link, not where it
// leads nor what is there. A kustomization that names a resource, base or
// component by URL (kustomize would run git or fetch it) is refused unless
// AllowRemote is set; then each file fetched over HTTP may have at most
// MaxOutput bytes (capFetches).
//
// A render that takes longer than Timeout is abandoned (a template cannot be
// interrupted: it runs on, its result dropped), and one whose documents
// come to more than MaxOutput bytes is refused; either is an error, as is a
// panic of the libraries.
func (o *Options) Expand(path string, info fs.FileInfo, root string) (docs []Document, handled bool, err error) {
	if info.IsDir() {
		if IsChart(path) {
			docs, err := o.bounded(path, func() ([]Document, error) { return o.chartDir(path, root) })
			return docs, true, err
		}
		if name := kustomizationFile(path); name != "" {
			if o.AllowRemote {
				capFetches(o.maxOutput())
			}
			docs, err := o.bounded(path, func() ([]Document, error) { return kustomize(path, name, root, o.AllowRemote) })
			return docs, true, err
		}
		return nil, false, nil
	}
	if !info.Mode().IsRegular() || !isArchiveName(path) {
		return nil, false, nil
	}
	if ok, err := isChartArchive(path); !ok {
		return nil, false, err
	}
	docs, err = o.bounded(path, func() ([]Document, error) { return o.chartArchive(path) })
	return docs, true, err
}

// maxOutput is MaxOutput, or its default.
func (o *Options) maxOutput() int64 {
	if o.MaxOutput <= 0 {
		return manifest.DefaultMaxFileSize
	}
	return o.MaxOutput
}

// bounded runs render within o's time and output limits.
func (o *Options) bounded(path string, render func() ([]Document, error)) ([]Document, error) {
	timeout, limit := o.Timeout, o.maxOutput()
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 {
		return nil, fmt.Errorf("--render-timeout %s: not a duration above zero", timeout)
	}
	type result struct {
		docs []Document
		err  error
	}
	done := make(chan result, 1) // the goroutine of an abandoned render ends without a reader
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("rendering %s failed: %v", path, p)}
			}
		}()
		docs, err := render()
		done <- result{docs, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		var size int64
		for _, d := range r.docs {
			size += int64(len(d.Data))
		}
		if size > limit {
			return nil, fmt.Errorf("rendering %s made %d bytes, more than the limit of %d (see --max-file-size)", path, size, limit)
		}
		return r.docs, nil
	case <-timer.C:
		return nil, fmt.Errorf("rendering %s took longer than %s (see --render-timeout): abandoned", path, timeout)
	}
}

// IsChart reports whether dir is a Helm chart's directory.
func IsChart(dir string) bool { return isFile(filepath.Join(dir, "Chart.yaml")) }

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// kustomizationFile returns the name of dir's kustomization file, "" when it
// has none. Kustomize itself refuses a directory with several.
func kustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if isFile(filepath.Join(dir, name)) {
			return name
		}
	}
	return ""
}

func isArchiveName(path string) bool {
	name := strings.ToLower(path)
	return strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar.gz")
}
