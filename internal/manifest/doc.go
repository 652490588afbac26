// Package manifest reads Kubernetes objects from YAML and JSON files,
// directories and standard input, keeping the file and line of every object
// and field. It is the edge where bytes become objects: nothing here judges
// them.
package manifest
