package profiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// tfSources says where a Terraform configuration declares its resources,
// which a plan or state in JSON does not: the .tf files of the root module
// (the directory of the plan, where `terraform show -json` runs) and of the
// modules `terraform init` installed there (.terraform/modules/modules.json).
type tfSources struct {
	root string
	// modules maps a module's key ("vpc", "eks.fargate_profile") to its
	// directory; "" is the root module.
	modules map[string]string
	// blocks caches, by directory, where each resource block is ("aws_subnet.private",
	// "data.aws_iam_policy_document.assume").
	blocks map[string]map[string]object.Source
}

// newTFSources reads the module manifest of the configuration in root;
// without one only the root module is known.
func newTFSources(root string) (*tfSources, error) {
	s := &tfSources{root: root, modules: map[string]string{"": root}, blocks: map[string]map[string]object.Source{}}
	path := filepath.Join(root, ".terraform", "modules", "modules.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading Terraform's module manifest: %w", err)
	}
	var manifest struct {
		Modules []struct{ Key, Dir string }
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		return s, fmt.Errorf("reading Terraform's module manifest %s: %w", path, err)
	}
	for _, m := range manifest.Modules {
		if m.Key != "" && m.Dir != "" && !filepath.IsAbs(m.Dir) {
			s.modules[m.Key] = filepath.Join(root, m.Dir)
		}
	}
	return s, nil
}

// Source returns the file and line of the block that declares the resource
// at address ("module.vpc.aws_subnet.private[0]"); ok is false when the
// configuration at hand does not have it.
func (s *tfSources) Source(address string) (object.Source, bool, error) {
	modules, resource, ok := splitAddress(address)
	if !ok {
		return object.Source{}, false, nil
	}
	dir, ok := s.modules[strings.Join(modules, ".")]
	if !ok {
		return object.Source{}, false, nil
	}
	blocks, err := s.read(dir)
	src, ok := blocks[resource]
	return src, ok, err
}

// read finds the resource and data blocks of the .tf files of dir. A file
// that does not parse is an error naming it; the others are still read.
func (s *tfSources) read(dir string) (map[string]object.Source, error) {
	if blocks, ok := s.blocks[dir]; ok {
		return blocks, nil
	}
	blocks := map[string]object.Source{}
	s.blocks[dir] = blocks
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return blocks, err
	}
	var errs []error
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading Terraform configuration: %w", err))
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, file, hcl.Pos{Line: 1, Column: 1})
		if diags.HasErrors() {
			errs = append(errs, fmt.Errorf("reading Terraform configuration: %w", diags))
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			if len(b.Labels) != 2 || (b.Type != "resource" && b.Type != "data") {
				continue
			}
			key := b.Labels[0] + "." + b.Labels[1]
			if b.Type == "data" {
				key = "data." + key
			}
			blocks[key] = object.Source{File: file, Line: b.DefRange().Start.Line}
		}
	}
	return blocks, errors.Join(errs...)
}

// splitAddress splits a resource address into its module names and the
// resource ("aws_subnet.private", "data.aws_iam_policy_document.x"), without
// instance keys: module.eks.module.fargate_profile["apps"].aws_iam_role.this[0]
// → [eks fargate_profile], aws_iam_role.this.
func splitAddress(address string) (modules []string, resource string, ok bool) {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(address); i++ {
		switch address[i] {
		case '[':
			if depth == 0 {
				parts = append(parts, address[start:i])
			}
			depth++
		case ']':
			depth--
			start = i + 1
		case '"':
			// A key's quoted string may hold brackets and dots.
			if j := strings.IndexByte(address[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case '.':
			if depth == 0 {
				if i > start {
					parts = append(parts, address[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(address) && depth == 0 {
		parts = append(parts, address[start:])
	}
	for len(parts) >= 2 && parts[0] == "module" {
		modules, parts = append(modules, parts[1]), parts[2:]
	}
	switch {
	case len(parts) == 2 && parts[0] != "data":
		return modules, parts[0] + "." + parts[1], true
	case len(parts) == 3 && parts[0] == "data":
		return modules, "data." + parts[1] + "." + parts[2], true
	}
	return nil, "", false
}
