package render

import (
	"fmt"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomize builds the kustomization in dir, whose kustomization file is
// named name, as `kustomize build` does.
//
// To point each object at the file that declared it, the build asks for
// kustomize's origin annotations (buildMetadata: [originAnnotations]), which
// the kustomization file is the only place to enable: the file system the
// build reads through adds the option to that one file. The annotations are
// removed from the objects afterwards.
func kustomize(dir, name string) ([]Document, error) {
	kustFile := filepath.Join(dir, name)
	disk := filesys.MakeFsOnDisk()
	root, _, err := disk.CleanedAbs(dir)
	if err != nil {
		return nil, fmt.Errorf("building kustomization %s: %w", kustFile, err)
	}
	fsys := originFS{FileSystem: disk, kustomization: root.Join(name)}
	objects, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
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
// being built asks for origin annotations.
type originFS struct {
	filesys.FileSystem
	kustomization string // absolute, symbolic links resolved
}

// ReadFile reads a file, adding originAnnotations to the buildMetadata of
// the kustomization being built. A file it cannot parse is left for
// kustomize to report.
func (f originFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil || filepath.Clean(path) != f.kustomization {
		return data, err
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
