package render

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fargatekit/fargatekit/internal/manifest"
)

// kustomize builds the kustomization in dir, whose kustomization file is
// named name, as `kustomize build` does; every file it reads must stay
// within root, and its resources and bases on disk unless allowRemote.
//
// To point each object at the file that declared it, the build asks for
// kustomize's origin annotations (buildMetadata: [originAnnotations]), which
// the kustomization file is the only place to enable: the file system the
// build reads through adds the option to that one file. The annotations are
// removed from the objects afterwards.
func kustomize(dir, name, root string, allowRemote bool) ([]Document, error) {
	kustFile := filepath.Join(dir, name)
	disk := filesys.MakeFsOnDisk()
	kroot, _, err := disk.CleanedAbs(dir)
	if err != nil {
		return nil, fmt.Errorf("building kustomization %s: %w", kustFile, err)
	}
	fsys := originFS{FileSystem: disk, kustomization: kroot.Join(name), root: root, allowRemote: allowRemote, refused: new(error)}
	objects, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if *fsys.refused != nil { // kustomize may report a refused read as a missing file
		return nil, fmt.Errorf("building kustomization %s: %w", kustFile, *fsys.refused)
	}
	if err != nil {
		return nil, fmt.Errorf("building kustomization %s: %w", kustFile, err)
	}
	var docs []Document
	for _, r := range objects.Resources() {
		file := kustFile
		origin, err := r.GetOrigin()
		if err != nil {
			return nil, fmt.Errorf("building kustomization %s: reading the origin of %s: %w", kustFile, r.CurId(), err)
		}
		if origin != nil && origin.Repo == "" {
			switch {
			case origin.Path != "":
				file = filepath.Join(dir, filepath.FromSlash(origin.Path))
			case origin.ConfiguredIn != "":
				file = filepath.Join(dir, filepath.FromSlash(origin.ConfiguredIn))
			}
		}
		if err := r.SetOrigin(nil); err != nil {
			return nil, fmt.Errorf("building kustomization %s: removing the origin of %s: %w", kustFile, r.CurId(), err)
		}
		data, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("building kustomization %s: writing %s: %w", kustFile, r.CurId(), err)
		}
		docs = append(docs, Document{File: file, Data: data})
	}
	return docs, nil
}

// originFS is the file system on disk, except that the kustomization file
// being built asks for origin annotations, no file out of root is read, and
// no kustomization that would make kustomize fetch from the network is.
type originFS struct {
	filesys.FileSystem
	kustomization string // absolute, symbolic links resolved
	root          string // manifest.Root of the input
	allowRemote   bool
	refused       *error // the first read refused, for the build's error
}

// ReadFile reads a file, adding originAnnotations to the buildMetadata of
// the kustomization being built. A file it cannot parse is left for
// kustomize to report.
//
// Kustomize reads a kustomization file before it loads what the file names:
// refusing the file there refuses its remote entries before any is fetched.
func (f originFS) ReadFile(path string) ([]byte, error) {
	if err := manifest.Confine(f.root, path); err != nil {
		return nil, f.refuse(err)
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return data, err
	}
	if !f.allowRemote && slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(path)) {
		var k types.Kustomization
		if k.Unmarshal(data) == nil {
			if remote := remoteEntries(&k); len(remote) > 0 {
				return nil, f.refuse(fmt.Errorf("%s names %s by URL: kustomize would fetch it (git, HTTP), which fargatekit does only with --allow-remote", path, strings.Join(remote, ", ")))
			}
		}
	}
	if filepath.Clean(path) != f.kustomization {
		return data, nil
	}
	node, perr := kyaml.Parse(string(data))
	if perr != nil || node.YNode().Kind != kyaml.MappingNode {
		return data, nil
	}
	list, perr := node.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "buildMetadata"))
	if perr != nil || list == nil || list.YNode().Kind != kyaml.SequenceNode {
		return data, nil
	}
	for _, item := range list.Content() {
		if item.Value == types.OriginAnnotations {
			return data, nil
		}
	}
	list.YNode().Content = append(list.YNode().Content, kyaml.NewStringRNode(types.OriginAnnotations).YNode())
	out, perr := node.String()
	if perr != nil {
		return data, nil
	}
	return []byte(out), nil
}

// refuse records err as the build's error, unless one is already.
func (f originFS) refuse(err error) error {
	if *f.refused == nil {
		*f.refused = err
	}
	return err
}

// remoteEntries lists what a kustomization names that kustomize would fetch
// rather than read from disk: a resource, base, component, generator,
// transformer or validator given as a git repository, and any file given as
// an http(s) URL (kustomize's IsRemoteFile).
func remoteEntries(k *types.Kustomization) []string {
	k.FixKustomization() // bases into resources, env into envs, as kustomize builds them
	var remote []string
	for _, e := range slices.Concat(k.Resources, k.Components, k.Generators, k.Transformers, k.Validators) {
		if isURL(e) || isGitRepo(e) {
			remote = append(remote, e)
		}
	}
	files := slices.Concat(k.Crds, k.Configurations, []string{k.OpenAPI["path"]})
	// Kustomize still builds the deprecated patch fields.
	for _, p := range slices.Concat(k.Patches, k.PatchesJson6902) { //nolint:staticcheck
		files = append(files, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck
		files = append(files, string(p))
	}
	for _, r := range k.Replacements {
		files = append(files, r.Path)
	}
	sources := func(kv types.KvPairSources) {
		for _, f := range kv.FileSources {
			_, path, found := strings.Cut(f, "=") // key=path, or a path
			if !found {
				path = f
			}
			files = append(files, path)
		}
		files = append(files, kv.EnvSources...)
	}
	for _, g := range k.ConfigMapGenerator {
		sources(g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		sources(g.KvPairSources)
	}
	for _, f := range files {
		if isURL(f) {
			remote = append(remote, f)
		}
	}
	return remote
}

// isURL is kustomize's IsRemoteFile: an http or https URL.
func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https")
}

// gitUser is the user part kustomize accepts before a host (git@github.com:).
var gitUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isGitRepo reports whether kustomize takes s for a git repository to clone
// (its git.NewRepoSpecFromURL finds a scheme, a user or GitHub's host): an
// optional git:: prefix, then ssh://, https://, http:// or file://, a
// user@, or github.com/ or github.com:.
func isGitRepo(s string) bool {
	if len(s) >= len("git::") && strings.EqualFold(s[:len("git::")], "git::") {
		s = s[len("git::"):]
	}
	lower := strings.ToLower(s)
	for _, prefix := range []string{"ssh://", "https://", "http://", "file://", "github.com/", "github.com:"} {
		if strings.HasPrefix(lower, prefix) {
			return true
		}
	}
	return gitUser.MatchString(s)
}
