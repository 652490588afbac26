package fargate

import (
	_ "embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/distribution/reference"
	"golang.org/x/mod/semver"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// MetadataClient is a controller that asks the EC2 instance metadata
// service (IMDS) for what it is not told. Fargate pods have no IMDS, so on
// Fargate it fails unless told (data/metadata-clients.yaml).
type MetadataClient struct {
	Name string `json:"name"`
	// Repositories are its image repositories without a tag, as path.Match
	// patterns.
	Repositories []string `json:"repositories"`
	// FixedIn is the first image tag that no longer needs IMDS; "" when
	// every one does.
	FixedIn string         `json:"fixedIn"`
	Needs   []MetadataNeed `json:"needs"`
	Source  string         `json:"source"`
}

// MetadataNeed is one thing a controller asks IMDS for, and the flags and
// environment variables any of which tell it instead. A need with neither
// is met only by an image from FixedIn on.
type MetadataNeed struct {
	What  string   `json:"what"`
	Flags []string `json:"flags"`
	Env   []string `json:"env"`
	// RegionEnv is true when the region variables of IRSA
	// (Settings.IRSAInjectsRegion) meet the need.
	RegionEnv bool `json:"regionEnv"`
}

//go:embed data/metadata-clients.yaml
var metadataClientsYAML []byte

// MetadataClients lists the controllers known to need IMDS.
var MetadataClients = mustMetadataClients(metadataClientsYAML)

func parseMetadataClients(data []byte) ([]MetadataClient, error) {
	var out []MetadataClient
	if err := yaml.UnmarshalStrict(data, &out); err != nil {
		return nil, fmt.Errorf("parsing the metadata clients: %w", err)
	}
	for _, c := range out {
		if c.Name == "" || len(c.Repositories) == 0 || len(c.Needs) == 0 || (c.FixedIn != "" && !semver.IsValid(c.FixedIn)) {
			return nil, fmt.Errorf("metadata client %q: a name, repositories, needs and a valid fixedIn are required", c.Name)
		}
		for _, p := range c.Repositories {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("metadata client %q: repository %q: %w", c.Name, p, err)
			}
		}
		for _, n := range c.Needs {
			if len(n.Flags)+len(n.Env) == 0 && c.FixedIn == "" {
				return nil, fmt.Errorf("metadata client %q: nothing tells it %s: give flags, env or the client's fixedIn", c.Name, n.What)
			}
		}
	}
	return out, nil
}

func mustMetadataClients(data []byte) []MetadataClient {
	c, err := parseMetadataClients(data)
	if err != nil {
		panic(err) // the embedded list is checked by tests; a broken build must not ship
	}
	return c
}

// MetadataAddresses are the addresses of the instance metadata service,
// IPv4 and IPv6, which Fargate pods cannot reach.
var MetadataAddresses = []string{"169.254.169.254", "fd00:ec2::254"}

// metadataURLs are the forms in which a value reaches for IMDS: a URL's
// host. A bare address is as likely to keep IMDS out (a NO_PROXY list, an
// iptables rule that drops it).
var metadataURLs = map[string]string{"://169.254.169.254": "169.254.169.254", "[fd00:ec2::254]": "fd00:ec2::254"}

// MetadataUse is a container that needs what Fargate does not have: a
// known controller not told what it would ask IMDS for, or a container
// that names an IMDS address.
type MetadataUse struct {
	Container string
	Init      bool
	// Field is the path inside the pod spec: the image for a controller,
	// the env value, arg or command that names an address.
	Field string
	// Client is the controller; nil for an address.
	Client *MetadataClient
	// Unmet are the controller's needs it is not told.
	Unmet []MetadataNeed
	// Address is the IMDS address a field names.
	Address string
}

// MetadataUses returns the containers of spec that need IMDS, under s.
func MetadataUses(spec *corev1.PodSpec, s Settings) []MetadataUse {
	var out []MetadataUse
	for _, c := range containers(spec) {
		if u := clientUse(c, s); u != nil {
			out = append(out, *u)
		}
		out = append(out, addressUses(c)...)
	}
	return out
}

// clientUse returns the use of a container that runs a known controller
// not told all it would ask IMDS for; nil otherwise.
func clientUse(c specContainer, s Settings) *MetadataUse {
	cl, ok := metadataClient(c.Image)
	if !ok {
		return nil
	}
	var unmet []MetadataNeed
	for _, n := range cl.Needs {
		if !told(c.Container, n, s) {
			unmet = append(unmet, n)
		}
	}
	if len(unmet) == 0 {
		return nil
	}
	return &MetadataUse{Container: c.Name, Init: c.init, Field: c.field("image"), Client: cl, Unmet: unmet}
}

// Detail says, for a person, what a controller asks IMDS for and how to
// tell it instead; "" for an address.
func (u MetadataUse) Detail() string {
	if u.Client == nil {
		return ""
	}
	var missing []string
	for _, n := range u.Unmet {
		if hint := n.Hint(); hint != "" {
			missing = append(missing, n.What+" ("+hint+")")
		} else {
			missing = append(missing, n.What+" (an image from "+u.Client.FixedIn+" on asks the cluster instead)")
		}
	}
	return fmt.Sprintf("container %q (%s) asks the instance metadata service for %s, and Fargate has none",
		u.Container, u.Client.Name, strings.Join(missing, " and "))
}

// metadataClient returns the controller whose image this is, unless the
// image's tag is one from FixedIn on.
func metadataClient(image string) (*MetadataClient, bool) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil, false
	}
	repo := named.Name()
	tag := ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	for i := range MetadataClients {
		cl := &MetadataClients[i]
		if !slices.ContainsFunc(cl.Repositories, func(p string) bool { ok, _ := path.Match(p, repo); return ok }) {
			continue
		}
		if cl.FixedIn != "" {
			v := tag
			if !strings.HasPrefix(v, "v") {
				v = "v" + v
			}
			if strings.HasPrefix(semver.Prerelease(v), "-eks") {
				v = strings.TrimSuffix(v, semver.Prerelease(v)) // an EKS add-on build of the release, not a pre-release
			}
			// An unknown tag (latest, a digest) is taken as fixed: no
			// finding without evidence.
			if !semver.IsValid(v) || semver.Compare(v, cl.FixedIn) >= 0 {
				return nil, false
			}
		}
		return cl, true
	}
	return nil, false
}

// told reports whether a container tells a controller what it would ask
// IMDS for: one of the need's flags in its args or command, one of its
// variables set, or the region IRSA injects. A container that takes
// variables from a ConfigMap or Secret (envFrom) may set any: it is taken
// to.
func told(c *corev1.Container, n MetadataNeed, s Settings) bool {
	if n.RegionEnv && s.IRSAInjectsRegion() {
		return true
	}
	args := slices.Concat(c.Command, c.Args)
	for i, arg := range args {
		for _, f := range n.Flags {
			valued := i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
			if (arg == f && valued) || (strings.HasPrefix(arg, f+"=") && len(arg) > len(f)+1) {
				return true
			}
		}
	}
	for _, e := range c.Env {
		if slices.Contains(n.Env, e.Name) && (e.Value != "" || e.ValueFrom != nil) {
			return true
		}
	}
	return len(n.Env) > 0 && len(c.EnvFrom) > 0
}

// addressUses returns the fields of a container that reach for an IMDS
// address: a URL with it as host. Proxy variables are left out: they list
// addresses to keep away from the proxy.
func addressUses(c specContainer) []MetadataUse {
	var out []MetadataUse
	add := func(field, value string) {
		for _, a := range MetadataAddresses {
			for form, addr := range metadataURLs {
				if addr == a && strings.Contains(value, form) {
					out = append(out, MetadataUse{Container: c.Name, Init: c.init, Field: c.field(field), Address: a})
					return
				}
			}
		}
	}
	for i, e := range c.Env {
		if !strings.HasSuffix(strings.ToUpper(e.Name), "_PROXY") {
			add(fmt.Sprintf("env[%d].value", i), e.Value)
		}
	}
	for i, a := range c.Command {
		add(fmt.Sprintf("command[%d]", i), a)
	}
	for i, a := range c.Args {
		add(fmt.Sprintf("args[%d]", i), a)
	}
	return out
}

// Hint says what tells a controller one need: "--aws-vpc-id or
// --aws-vpc-tags", "the environment variable AWS_REGION".
func (n MetadataNeed) Hint() string {
	var ways []string
	ways = append(ways, n.Flags...)
	for _, e := range n.Env {
		ways = append(ways, "the variable "+e)
	}
	if len(ways) == 0 {
		return ""
	}
	return strings.Join(ways, " or ")
}
