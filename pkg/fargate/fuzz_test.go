package fargate

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// wildcardRegexp is an independent oracle for Wildcard: * and ? as regexp.
func wildcardRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}

func FuzzWildcard(f *testing.F) {
	f.Add("prod-*", "prod-eu")
	f.Add("a*b?c", "axxbyc")
	f.Add("*?*", "")
	f.Add("?", "ü")
	f.Add("*a", "*ba") // a * in s is an ordinary character
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 {
			return
		}
		if !utf8Valid(pattern) || !utf8Valid(s) {
			return
		}
		want := wildcardRegexp(pattern).MatchString(s)
		if got := Wildcard(pattern, s); got != want {
			t.Fatalf("Wildcard(%q, %q) = %v, regexp oracle says %v", pattern, s, got, want)
		}
	})
}

// FuzzWildcardCovers checks WildcardCovers against Wildcard: for a literal
// s it is Wildcard(t, s), every pattern covers itself, and when t covers s,
// t matches a string that s matches. That string is made from s with the
// bytes of fill: each * becomes up to three characters, each ? one, drawn
// from the characters of t and s, which are the likeliest to tell t and s
// apart.
func FuzzWildcardCovers(f *testing.F) {
	f.Add("team-*", "team-?", []byte("ab"))
	f.Add("t*-*", "team-*", []byte{3, 1, 2, 0, 9})
	f.Add("*a", "*ba", []byte{2, 0, 1})
	f.Add("?", "*", []byte{})
	f.Add("*?*", "a*?b", []byte{7, 7, 7, 7})
	f.Add("app.kubernetes.io/*", "app.kubernetes.io/?ame", []byte{5})
	// Long inputs: backtracking makes at most len(t)*len(s) steps.
	f.Add(strings.Repeat("*a", 100)+"*b", strings.Repeat("a", 255), []byte{1})
	f.Fuzz(func(t *testing.T, pattern, s string, fill []byte) {
		if len(pattern) > 256 || len(s) > 256 || len(fill) > 1024 {
			return
		}
		covers := WildcardCovers(pattern, s)
		if !strings.ContainsAny(s, "*?") {
			if want := Wildcard(pattern, s); covers != want {
				t.Fatalf("WildcardCovers(%q, %q) = %v, Wildcard says %v", pattern, s, covers, want)
			}
		}
		if !WildcardCovers(s, s) {
			t.Fatalf("WildcardCovers(%q, %q) = false, want true: a pattern covers itself", s, s)
		}
		if !covers {
			return
		}
		x := expand(s, []rune(pattern+s+"x"), fill)
		if !Wildcard(s, x) {
			t.Fatalf("Wildcard(%q, %q) = false, but %q was made from %q", s, x, x, s)
		}
		if !Wildcard(pattern, x) {
			t.Fatalf("WildcardCovers(%q, %q) = true, but %q matches %q and not %q", pattern, s, x, s, pattern)
		}
	})
}

// expand returns a string that pattern matches: each * becomes up to three
// characters, each ? one, taken from chars as the bytes of fill say.
func expand(pattern string, chars []rune, fill []byte) string {
	next := func() int {
		if len(fill) == 0 {
			return 0
		}
		b := fill[0]
		fill = fill[1:]
		return int(b)
	}
	var b strings.Builder
	for _, r := range pattern {
		n := 1
		switch r {
		case '*':
			n = next() % 4
		case '?':
		default:
			b.WriteRune(r)
			continue
		}
		for range n {
			b.WriteRune(chars[next()%len(chars)])
		}
	}
	return b.String()
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

func FuzzSizePod(f *testing.F) {
	f.Add("1", "8Gi", "", "", "0")
	f.Add("250m", "1793Mi", "2", "100Mi", "10Gi")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, cpu, mem, initCPU, initMem, eph string) {
		c := corev1.Container{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
		ic := corev1.Container{Name: "i", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
		set := func(l corev1.ResourceList, name corev1.ResourceName, v string) {
			if object.ExtremeExponent(strings.TrimSpace(v)) {
				return // ParseQuantity takes minutes on 1E-999999999, which check's decoding refuses
			}
			if q, err := resource.ParseQuantity(v); err == nil && q.Sign() >= 0 {
				l[name] = q
			}
		}
		set(c.Resources.Requests, corev1.ResourceCPU, cpu)
		set(c.Resources.Requests, corev1.ResourceMemory, mem)
		set(c.Resources.Requests, corev1.ResourceEphemeralStorage, eph)
		set(ic.Resources.Requests, corev1.ResourceCPU, initCPU)
		set(ic.Resources.Requests, corev1.ResourceMemory, initMem)
		s := SizePod(&corev1.PodSpec{InitContainers: []corev1.Container{ic}, Containers: []corev1.Container{c}})
		if s.Provisioned == (Size{}) {
			if _, ok := RoundUp(s.RequestedMilliCPU, s.RequestedMemoryMiB+OverheadMemoryMiB); ok {
				t.Fatalf("no size for %+v although one fits", s)
			}
			return
		}
		if s.Provisioned.MilliCPU < s.RequestedMilliCPU || s.Provisioned.MemoryMiB < s.RequestedMemoryMiB+OverheadMemoryMiB {
			t.Fatalf("provisioned %v is smaller than requested %+v", s.Provisioned, s)
		}
		valid := false
		for _, v := range Sizes {
			valid = valid || v == s.Provisioned
		}
		if !valid {
			t.Fatalf("provisioned %v is not a Fargate size", s.Provisioned)
		}
	})
}

// FuzzRequests requires requests, which adds up itself the containers'
// requests of a pod of long-running containers, to agree with podRequests,
// which asks resourcehelper.PodRequests: on requests, limits standing in for
// them, and decimal, negative and huge quantities.
func FuzzRequests(f *testing.F) {
	f.Add("500m", "1Gi", "", "2Gi", "100m", "", "1", "10Gi")
	f.Add("", "", "2", "1.23456789012345678901", "1E19", "1n", "", "")
	f.Add("0", "0.5", "1e3", "", "-1", "", "", "1Ei")
	f.Add("", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, cpuA, memA, limitCPUA, limitMemA, cpuB, memB, limitCPUB, ephB string) {
		set := func(l *corev1.ResourceList, name corev1.ResourceName, v string) {
			if object.ExtremeExponent(strings.TrimSpace(v)) {
				return // ParseQuantity takes minutes on 1E-999999999, which check's decoding refuses
			}
			if q, err := resource.ParseQuantity(v); err == nil {
				if *l == nil {
					*l = corev1.ResourceList{}
				}
				(*l)[name] = q
			}
		}
		var a, b corev1.ResourceRequirements
		set(&a.Requests, corev1.ResourceCPU, cpuA)
		set(&a.Requests, corev1.ResourceMemory, memA)
		set(&a.Limits, corev1.ResourceCPU, limitCPUA)
		set(&a.Limits, corev1.ResourceMemory, limitMemA)
		set(&b.Requests, corev1.ResourceCPU, cpuB)
		set(&b.Requests, corev1.ResourceMemory, memB)
		set(&b.Limits, corev1.ResourceCPU, limitCPUB)
		set(&b.Limits, corev1.ResourceEphemeralStorage, ephB)
		spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Resources: a}, {Name: "b", Resources: b}, {Name: "c"}}}
		cpu, memory, ephemeral := requests(spec)
		wantCPU, wantMemory, wantEphemeral := podRequests(spec)
		for _, c := range []struct {
			name      string
			got, want resource.Quantity
		}{{"cpu", cpu, wantCPU}, {"memory", memory, wantMemory}, {"ephemeral storage", ephemeral, wantEphemeral}} {
			if c.got.Cmp(c.want) != 0 {
				t.Errorf("%s: requests gives %s, PodRequests %s", c.name, c.got.String(), c.want.String())
			}
		}
		// A limit that stands in for a missing request is part of the
		// pod's size: only a limit above its own request fails to start.
		withInit := &corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", Resources: a}}, Containers: []corev1.Container{{Name: "b", Resources: b}}}
		for _, spec := range []*corev1.PodSpec{spec, withInit} {
			size := SizePod(spec)
			if !size.Fits {
				continue
			}
			for _, f := range StartFailures(spec, size.Provisioned, Settings{FailMemoryLimitAboveSize: true}) {
				res := corev1.ResourceCPU
				if strings.HasSuffix(f.Field, "memory") {
					res = corev1.ResourceMemory
				}
				for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
					if _, ok := c.Resources.Requests[res]; c.Name == f.Container && !ok {
						t.Errorf("%s fails at %s without a %s request: %s", f.Container, size.Provisioned, res, f.Detail)
					}
				}
			}
		}
	})
}

// FuzzSelector checks Selector.Matches, wildcard label keys included, against
// an oracle written with regular expressions.
func FuzzSelector(f *testing.F) {
	f.Add("prod-*", "app", "web-?", "prod-eu", "app", "web-1", "tier", "x")
	f.Add("*", "app.kubernetes.io/*", "*", "ns", "app.kubernetes.io/name", "shop", "", "")
	f.Add("p?", "", "", "px", "k", "v", "k2", "v2")
	f.Fuzz(func(t *testing.T, nsPat, keyPat, valPat, ns, k1, v1, k2, v2 string) {
		for _, s := range []string{nsPat, keyPat, valPat, ns, k1, v1, k2, v2} {
			if len(s) > 40 || !utf8Valid(s) {
				return
			}
		}
		sel := Selector{Namespace: nsPat}
		if keyPat != "" {
			sel.Labels = map[string]string{keyPat: valPat}
		}
		labels := map[string]string{k1: v1, k2: v2}
		want := wildcardRegexp(nsPat).MatchString(ns)
		if want && keyPat != "" {
			kre, vre := wildcardRegexp(keyPat), wildcardRegexp(valPat)
			found := false
			for k, v := range labels {
				found = found || (kre.MatchString(k) && vre.MatchString(v))
			}
			want = found
		}
		if got := sel.Matches(ns, labels); got != want {
			t.Fatalf("%+v matches ns %q labels %v = %v, oracle says %v", sel, ns, labels, got, want)
		}
	})
}

// FuzzLoggingProblems: any ConfigMap content is judged without a panic, and
// every problem names a key of the data or none.
func FuzzLoggingProblems(f *testing.F) {
	f.Add("output.conf", "[OUTPUT]\n    Name cloudwatch_logs\n    Match *\n", "filters.conf", "[FILTER]\n Name grep\n")
	f.Add("flb_log_cw", "yes", "parsers.conf", "[PARSER]\n Name ${X}\n")
	f.Add("output.conf", "Kube_URL x\n[output]\n", "x", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		data := map[string]string{k1: v1, k2: v2}
		for _, p := range LoggingProblems(data) {
			if _, ok := data[p.Key]; p.Key != "" && !ok || p.Message == "" {
				t.Errorf("problem %+v of %v", p, data)
			}
		}
	})
}
