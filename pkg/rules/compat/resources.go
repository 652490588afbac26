package compat

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// names returns a resource list's names, sorted.
func names(l corev1.ResourceList) []string {
	out := make([]string, 0, len(l))
	for n := range l {
		out = append(out, string(n))
	}
	sort.Strings(out)
	return out
}
