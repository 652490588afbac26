package eks

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMinor extracts the Kubernetes "major.minor" version from s.
// It accepts "1.29", "v1.29", "1.29.3" and "v1.29.3-eks-abc" (a suffix
// starting with '-' or '+' is ignored) and returns "1.29". Leading zeros
// are dropped, so "1.09" becomes "1.9". The major version must be at least 1.
func ParseMinor(s string) (string, error) {
	major, minor, err := parseMajorMinor(s)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor), nil
}

// parseMajorMinor does the work of ParseMinor and returns the numbers.
func parseMajorMinor(s string) (major, minor int, err error) {
	bad := func(why string) (int, int, error) {
		return 0, 0, fmt.Errorf("invalid Kubernetes version %q: %s; expected major.minor such as \"1.29\", \"v1.29\" or \"1.29.3\"", s, why)
	}
	v := strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return bad("want two or three dot-separated numbers")
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := parseDigits(p)
		if err != nil {
			return bad(err.Error())
		}
		nums[i] = n
	}
	if nums[0] < 1 {
		return bad("major version must be at least 1")
	}
	return nums[0], nums[1], nil
}

// parseDigits parses a non-empty string of ASCII digits.
func parseDigits(p string) (int, error) {
	if p == "" {
		return 0, fmt.Errorf("empty number")
	}
	for _, r := range p {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a number", p)
		}
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, fmt.Errorf("number %q: %w", p, err)
	}
	return n, nil
}

// CompareMinor compares two "major.minor" versions numerically, so that
// "1.9" sorts before "1.16". It returns -1 if a < b, 0 if a == b and +1 if
// a > b. The inputs are expected to come from ParseMinor; if either one is
// not a valid version the two strings are compared lexically instead.
func CompareMinor(a, b string) int {
	amaj, amin, aerr := parseMajorMinor(a)
	bmaj, bmin, berr := parseMajorMinor(b)
	if aerr != nil || berr != nil {
		return strings.Compare(a, b)
	}
	if amaj != bmaj {
		return cmpInt(amaj, bmaj)
	}
	return cmpInt(amin, bmin)
}

// NextMinor returns the minor version after v: "1.35" → "1.36"; v itself
// when it is not a version.
func NextMinor(v string) string {
	major, minor, err := parseMajorMinor(v)
	if err != nil {
		return v
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor+1)
}

// cmpInt returns -1, 0 or +1 as x is less than, equal to or greater than y.
func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	default:
		return 0
	}
}
