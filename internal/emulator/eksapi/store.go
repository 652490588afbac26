package eksapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2/maybe"
	"github.com/google/uuid"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
)

// StateFile is the name of the file, in the state directory, that holds the
// cluster's version and updates, its node groups and Fargate profiles.
const StateFile = "eks.json"

// oldStateFile is StateFile of emulators made before node groups, which
// held the profiles only; it is read when StateFile is missing.
const oldStateFile = "fargate-profiles.json"

// stateVersion is the format version of StateFile.
const stateVersion = 1

// DefaultPodExecutionRole is the role name given to the profiles of the
// configuration, which has no field for it.
const DefaultPodExecutionRole = clusterconfig.DefaultPodExecutionRole

// Roles are the account's IAM roles, as far as CreateFargateProfile looks
// at them: the emulator's IAM API (iamapi.Server) is one.
type Roles interface {
	// TrustPolicy returns the trust policy (JSON) of the role whose ARN is
	// roleARN, and whether the account has that role.
	TrustPolicy(roleARN string) (doc string, ok bool)
}

// Limits are EKS's quotas on Fargate profiles. A zero limit is not checked.
type Limits struct {
	// TagsPerProfile is the number of tags a profile may carry.
	TagsPerProfile int
	// Profiles per cluster (in any status), selectors per profile and labels
	// per selector: the settings' quotas.
	fargate.Limits
}

// DefaultLimits are EKS's documented defaults (adjustable on AWS; the current
// values are unconfirmed, see fargate-facts §1).
var DefaultLimits = Limits{TagsPerProfile: 50, Limits: fargate.DefaultLimits}

// Health is a profile's health: its issues, none in the emulator.
type Health struct {
	Issues []Issue `json:"issues"`
}

// Issue is a health issue of a profile.
type Issue struct {
	Code        string   `json:"code"`
	Message     string   `json:"message,omitempty"`
	ResourceIDs []string `json:"resourceIds,omitempty"`
}

// ProfileState is a Fargate profile as the Store keeps it.
type ProfileState struct {
	// Profile is the profile itself: name, selectors, subnets, role and
	// status (one of the fargate.Status* values).
	fargate.Profile
	ARN         string            `json:"fargateProfileArn"`
	ClusterName string            `json:"clusterName"`
	CreatedAt   time.Time         `json:"createdAt"`
	Tags        map[string]string `json:"tags"`
	Health      Health            `json:"health"`
	// ClientRequestToken is the idempotency token of the create.
	ClientRequestToken string `json:"clientRequestToken,omitempty"`
	// StatusSince is when the profile entered Status; a CREATING profile
	// becomes ACTIVE Timings.ProfileCreate later, a DELETING one disappears
	// Timings.ProfileDelete later.
	StatusSince time.Time `json:"statusSince"`
}

func (p *ProfileState) clone() ProfileState {
	c := *p
	c.Subnets = slices.Clone(p.Subnets)
	c.Selectors = make([]fargate.Selector, len(p.Selectors))
	for i, s := range p.Selectors {
		c.Selectors[i] = fargate.Selector{Namespace: s.Namespace, Labels: maps.Clone(s.Labels)}
	}
	c.Tags = maps.Clone(p.Tags)
	c.Health.Issues = slices.Clone(p.Health.Issues)
	return c
}

// stateFile is the JSON document of StateFile. A file without
// ControlPlane (written before node groups) gets the configuration's
// control plane and node groups.
type stateFile struct {
	Version      int              `json:"version"`
	Cluster      string           `json:"cluster"`
	ControlPlane *ClusterState    `json:"controlPlane,omitempty"`
	Nodegroups   []NodegroupState `json:"nodegroups"`
	Updates      []UpdateState    `json:"updates"`
	Profiles     []ProfileState   `json:"profiles"`
}

// change is one status change, delivered to OnChange listeners.
type change struct{ name, from, to string }

// Store is the cluster's EKS resources (its control plane version and
// updates, node groups and Fargate profiles), persisted in a state
// directory. It is safe for concurrent use.
type Store struct {
	cfg    *clusterconfig.Config
	path   string
	clock  clock.WithTicker
	limits Limits
	policy eks.UpgradePolicy
	roles  Roles // nil: no role is known
	log    *slog.Logger
	// waitServed: an update of the control plane completes only once
	// Serving reported its version.
	waitServed bool

	mu         sync.Mutex
	cluster    ClusterState
	served     string           // the version the control plane serves, as Serving reported it
	nodegroups []NodegroupState // sorted by name
	updates    []UpdateState    // in creation order
	profiles   []ProfileState   // sorted by name
	listeners  []func(name, from, to string)
	pending    []change // changes not yet delivered to listeners

	// delivering is held by the goroutine delivering pending changes.
	delivering sync.Mutex
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock of lifecycle transitions and creation times
// (default: the real clock).
func WithClock(c clock.WithTicker) Option { return func(s *Store) { s.clock = c } }

// WithLimits sets the quotas (default: DefaultLimits).
func WithLimits(l Limits) Option { return func(s *Store) { s.limits = l } }

// WithUpgradePolicy sets what UpdateClusterVersion refuses where EKS's
// behaviour is unconfirmed (default: eks.DefaultUpgradePolicy).
func WithUpgradePolicy(p eks.UpgradePolicy) Option { return func(s *Store) { s.policy = p } }

// WithServedVersion makes an update of the control plane complete only once
// Timings.ClusterUpdate has passed and Serving reported the new version:
// the Store's owner makes the control plane serve it.
func WithServedVersion() Option { return func(s *Store) { s.waitServed = true } }

// WithRoles makes CreateFargateProfile check the trust policy of a pod
// execution role that roles has, as EKS does: one that does not let
// eks-fargate-pods.amazonaws.com assume it is refused. A role roles does
// not have is accepted (what EKS answers is unconfirmed), as are all roles
// without this option.
func WithRoles(roles Roles) Option { return func(s *Store) { s.roles = roles } }

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// NewStore opens the EKS resources of cfg's cluster in dir, creating dir if
// needed. On a fresh directory the control plane, node groups and profiles
// of cfg are created ACTIVE. A state file that cannot be read is an error
// naming the file.
func NewStore(cfg *clusterconfig.Config, dir string, opts ...Option) (*Store, error) {
	s := &Store{cfg: cfg, path: filepath.Join(dir, StateFile), clock: clock.RealClock{}, limits: DefaultLimits, policy: eks.DefaultUpgradePolicy, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = os.ReadFile(filepath.Join(dir, oldStateFile))
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.seed()
		s.seedCluster()
		if err := s.saveLocked(); err != nil {
			return nil, err
		}
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("reading the EKS state: %w", err)
	}
	seeded, err := s.load(data)
	if err != nil {
		return nil, fmt.Errorf("reading the EKS state from %s: %w", s.path, err)
	}
	if seeded {
		if err := s.saveLocked(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// seed creates the configuration's profiles, ACTIVE.
func (s *Store) seed() {
	now := s.clock.Now().UTC()
	for _, p := range s.cfg.FargateProfiles {
		subnets := p.Subnets
		if len(subnets) == 0 {
			subnets = s.cfg.PrivateSubnetIDs()
		}
		ps := ProfileState{
			Profile: fargate.Profile{
				Name: p.Name, Selectors: slices.Clone(p.Selectors), Subnets: slices.Clone(subnets), Status: fargate.StatusActive,
				PodExecutionRoleARN: s.cfg.RoleARN(DefaultPodExecutionRole),
			},
			ARN:         s.profileARN(p.Name),
			ClusterName: s.cfg.Metadata.Name,
			CreatedAt:   now,
			Tags:        map[string]string{},
			Health:      Health{Issues: []Issue{}},
			StatusSince: now,
		}
		s.profiles = append(s.profiles, ps.clone())
	}
	s.sort()
}

// SavedVersion returns the control plane's version recorded in the state
// directory dir by a Store, or "" when there is none. It only reads.
func SavedVersion(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return ""
	}
	var st stateFile
	if json.Unmarshal(data, &st) != nil || st.ControlPlane == nil {
		return ""
	}
	return st.ControlPlane.Version
}

// load reads a state file; seeded says the control plane and node groups
// came from the configuration, the file being older than them.
func (s *Store) load(data []byte) (seeded bool, err error) {
	var st stateFile
	if err := json.Unmarshal(data, &st); err != nil {
		return false, err
	}
	if st.Version != stateVersion {
		return false, fmt.Errorf("format version %d, want %d", st.Version, stateVersion)
	}
	if st.Cluster != s.cfg.Metadata.Name {
		return false, fmt.Errorf("the profiles are those of cluster %q, not %q", st.Cluster, s.cfg.Metadata.Name)
	}
	seen := map[string]bool{}
	for i, p := range st.Profiles {
		switch {
		case p.Name == "":
			return false, fmt.Errorf("profile %d has no name", i)
		case seen[p.Name]:
			return false, fmt.Errorf("profile %q appears twice", p.Name)
		}
		switch p.Status {
		case fargate.StatusCreating, fargate.StatusActive, fargate.StatusDeleting, fargate.StatusCreateFailed, fargate.StatusDeleteFailed:
		default:
			return false, fmt.Errorf("profile %q has status %q", p.Name, p.Status)
		}
		seen[p.Name] = true
		if p.Tags == nil {
			st.Profiles[i].Tags = map[string]string{}
		}
		if p.Health.Issues == nil {
			st.Profiles[i].Health.Issues = []Issue{}
		}
	}
	s.profiles = st.Profiles
	s.sort()
	if st.ControlPlane == nil {
		s.seedCluster()
		return true, nil
	}
	s.cluster, s.nodegroups, s.updates = *st.ControlPlane, st.Nodegroups, st.Updates
	return false, s.checkLoaded()
}

func (s *Store) sort() {
	slices.SortFunc(s.profiles, func(a, b ProfileState) int { return strings.Compare(a.Name, b.Name) })
}

// saveLocked writes the profiles atomically: a temporary file in the same
// directory, synced, then renamed over StateFile.
func (s *Store) saveLocked() error {
	cluster := s.cluster
	data, err := json.MarshalIndent(stateFile{
		Version: stateVersion, Cluster: s.cfg.Metadata.Name, ControlPlane: &cluster,
		Nodegroups: s.nodegroups, Updates: s.updates, Profiles: s.profiles,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the EKS state: %w", err)
	}
	if err := maybe.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the EKS state to %s: %w", s.path, err)
	}
	dir := filepath.Dir(s.path)
	_ = os.Remove(filepath.Join(dir, oldStateFile)) // read, and now in StateFile
	return nil
}

func (s *Store) profileARN(name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:fargateprofile/%s/%s/%s", s.cfg.Metadata.Region, s.cfg.AccountID, s.cfg.Metadata.Name, name, uuid.NewString())
}

func (s *Store) indexLocked(name string) int {
	i, ok := slices.BinarySearchFunc(s.profiles, name, func(p ProfileState, n string) int { return strings.Compare(p.Name, n) })
	if !ok {
		return -1
	}
	return i
}

// OnChange registers fn, called after every status change of a profile: from
// "" to CREATING when one is created, CREATING to ACTIVE, ACTIVE to DELETING,
// DELETING to "" when it is gone. Calls come in the order of the changes, one
// at a time, after the change is saved, on the goroutine that made the change
// or on another that is delivering earlier changes. fn may call the Store.
func (s *Store) OnChange(fn func(name string, from, to string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

// deliver calls the listeners with the pending changes, unless another
// goroutine is already doing so (it will deliver them).
func (s *Store) deliver() {
	for {
		if !s.delivering.TryLock() {
			return
		}
		for {
			s.mu.Lock()
			batch, fns := s.pending, slices.Clone(s.listeners)
			s.pending = nil
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, c := range batch {
				s.log.Info("Fargate profile status changed", "cluster", s.cfg.Metadata.Name, "profile", c.name, "from", c.from, "to", c.to)
				for _, fn := range fns {
					fn(c.name, c.from, c.to)
				}
			}
		}
		s.delivering.Unlock()
		// A change queued while this goroutine held delivering was left to
		// it: look again.
		s.mu.Lock()
		more := len(s.pending) > 0
		s.mu.Unlock()
		if !more {
			return
		}
	}
}

// Tick applies the transitions due at now: CREATING profiles whose
// Timings.ProfileCreate has elapsed since StatusSince become ACTIVE, DELETING
// profiles whose Timings.ProfileDelete has elapsed are removed, and likewise
// for the control plane's version update and node groups
// (tickClusterLocked). Transitions
// depend only on the stored StatusSince, so a restarted emulator continues
// operations where they were. An error saving the state is returned, the
// transitions are applied in memory all the same.
func (s *Store) Tick(now time.Time) error {
	s.mu.Lock()
	n, err := s.tickLocked(now)
	s.mu.Unlock()
	if n > 0 {
		s.deliver()
	}
	return err
}

// tickLocked applies the due transitions, saves and queues the changes; it
// returns how many there were.
func (s *Store) tickLocked(now time.Time) (int, error) {
	var changes []change
	kept := s.profiles[:0:0]
	for _, p := range s.profiles {
		switch {
		case p.Status == fargate.StatusCreating && !now.Before(p.StatusSince.Add(s.cfg.Timings.ProfileCreate.Duration)):
			p.Status = fargate.StatusActive
			p.StatusSince = p.StatusSince.Add(s.cfg.Timings.ProfileCreate.Duration)
			changes = append(changes, change{p.Name, fargate.StatusCreating, fargate.StatusActive})
		case p.Status == fargate.StatusDeleting && !now.Before(p.StatusSince.Add(s.cfg.Timings.ProfileDelete.Duration)):
			changes = append(changes, change{p.Name, fargate.StatusDeleting, ""})
			continue
		}
		kept = append(kept, p)
	}
	s.profiles = kept
	if !s.tickClusterLocked(now) && len(changes) == 0 {
		return 0, nil
	}
	s.pending = append(s.pending, changes...)
	return len(changes), s.saveLocked()
}

// Active returns the ACTIVE profiles, with their selectors and subnets, as of
// the last Tick or API call.
func (s *Store) Active() []fargate.Profile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []fargate.Profile
	for i := range s.profiles {
		p := s.profiles[i].clone()
		if p.Status == fargate.StatusActive {
			out = append(out, p.Profile)
		}
	}
	return out
}

// Profiles returns every profile, in any status, sorted by name.
func (s *Store) Profiles() []ProfileState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ProfileState, len(s.profiles))
	for i := range s.profiles {
		out[i] = s.profiles[i].clone()
	}
	return out
}

// profile returns one profile after applying due transitions.
func (s *Store) profile(name string) (ProfileState, error) {
	var (
		p   ProfileState
		err error
	)
	_ = s.update(func() (bool, error) { // read only: it cannot fail
		i := s.indexLocked(name)
		if i < 0 {
			err = errProfileNotFound(s.cfg.Metadata.Name, name)
			return false, nil
		}
		p = s.profiles[i].clone()
		return false, nil
	})
	return p, err
}

// names returns the names of every profile, sorted, after applying due
// transitions.
func (s *Store) names() []string {
	var out []string
	_ = s.update(func() (bool, error) { // read only: it cannot fail
		for _, p := range s.profiles {
			out = append(out, p.Name)
		}
		return false, nil
	})
	return out
}

// update applies due transitions then runs fn under the lock. When fn
// reports a change, the profiles are saved; if saving fails they are restored
// and the error returned. Changes are then delivered to listeners.
func (s *Store) update(fn func() (changed bool, err error)) error {
	s.mu.Lock()
	n, terr := s.tickLocked(s.clock.Now())
	if terr != nil {
		s.log.Warn("cannot save Fargate profile transitions", "err", terr)
	}
	before, pending := slices.Clone(s.profiles), len(s.pending)
	changed, err := fn()
	if err == nil && changed {
		if err = s.saveLocked(); err != nil {
			s.profiles, s.pending = before, s.pending[:pending]
		}
	}
	more := len(s.pending) > 0
	s.mu.Unlock()
	if n > 0 || more {
		s.deliver()
	}
	return err
}

// createInput is a CreateFargateProfile request.
type createInput struct {
	Name                string
	PodExecutionRoleARN string
	Subnets             []string
	Selectors           []fargate.Selector
	ClientRequestToken  string
	Tags                map[string]string
}

var roleARNRE = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/(.+)$`)

// validate checks a create as EKS does, before looking at the other
// profiles. Texts not documented in errors.go are composed (unconfirmed).
func (s *Store) validate(in *createInput) *apiError {
	cluster, name := s.cfg.Metadata.Name, in.Name
	// The domain's validation, in EKS's order: the name, the role, the selectors.
	violations := (&fargate.Profile{Name: name, Selectors: in.Selectors}).Validate(s.limits.Limits)
	if len(violations) > 0 && slices.Contains([]fargate.ViolationKind{fargate.NameRequired, fargate.NameReserved, fargate.NameInvalid}, violations[0].Kind) {
		return violationError(cluster, name, violations[0])
	}
	if in.PodExecutionRoleARN == "" {
		return invalidParameter(cluster, name, "podExecutionRoleArn is required.")
	}
	m := roleARNRE.FindStringSubmatch(in.PodExecutionRoleARN)
	if m == nil {
		return invalidParameter(cluster, name, "podExecutionRoleArn %q is not an IAM role ARN.", in.PodExecutionRoleARN)
	}
	if !clusterconfig.ValidRoleName(m[1]) {
		// fargate-facts §1: the role may have no path other than /.
		return invalidParameter(cluster, name, "podExecutionRoleArn %q is not valid: the pod execution role must have no path other than /.", in.PodExecutionRoleARN)
	}
	if len(violations) > 0 {
		return violationError(cluster, name, violations[0])
	}
	for _, id := range in.Subnets {
		if _, ok := s.cfg.SubnetAZ(id); ok {
			continue
		}
		for _, pub := range s.cfg.VPC.Subnets.Public {
			if pub.ID == id {
				return errNotPrivateSubnet(cluster, name, id)
			}
		}
		return errUnknownSubnet(cluster, name, id, s.cfg.VPC.ID)
	}
	if l := s.limits.TagsPerProfile; l > 0 && len(in.Tags) > l {
		return invalidParameter(cluster, name, "tags: %d tags given, at most %d are allowed.", len(in.Tags), l)
	}
	// The role's trust policy, last: EKS reads it from IAM (where in EKS's
	// order this comes is unconfirmed).
	return s.checkTrust(cluster, name, in.PodExecutionRoleARN)
}

// checkTrust refuses a pod execution role of the account's IAM whose trust
// policy does not let eks-fargate-pods.amazonaws.com assume it, with EKS's
// text. A role the account does not have passes (unconfirmed).
func (s *Store) checkTrust(cluster, name, roleARN string) *apiError {
	if s.roles == nil {
		return nil
	}
	doc, ok := s.roles.TrustPolicy(roleARN)
	if !ok {
		return nil
	}
	trust, err := foundation.ParseTrust(doc)
	if err != nil {
		s.log.Warn("reading a pod execution role's trust policy", "role", roleARN, "err", err)
	}
	if !trust.Fargate {
		return invalidParameter(cluster, name, "%s", foundation.MisconfiguredTrust)
	}
	return nil
}

// busyLocked returns the profile being created or deleted, if any.
func (s *Store) busyLocked() *ProfileState {
	for i := range s.profiles {
		if st := s.profiles[i].Status; st == fargate.StatusCreating || st == fargate.StatusDeleting {
			return &s.profiles[i]
		}
	}
	return nil
}

// create creates a profile, CREATING, after the checks of EKS in this
// order: the request itself, idempotency (a create repeated with the same
// clientRequestToken returns the profile it created), the name, an operation
// in progress, the quota.
func (s *Store) create(in createInput) (ProfileState, error) {
	cluster := s.cfg.Metadata.Name
	if err := s.validate(&in); err != nil {
		return ProfileState{}, err
	}
	var out ProfileState
	err := s.update(func() (bool, error) {
		if in.ClientRequestToken != "" {
			for i := range s.profiles {
				if p := &s.profiles[i]; p.ClientRequestToken == in.ClientRequestToken {
					if p.Name != in.Name {
						// Composed (unconfirmed).
						return false, invalidParameter(cluster, in.Name, "clientRequestToken %s was already used to create Fargate profile %s.", in.ClientRequestToken, p.Name)
					}
					out = p.clone()
					return false, nil
				}
			}
		}
		if s.indexLocked(in.Name) >= 0 {
			return false, errProfileExists(cluster, in.Name)
		}
		if b := s.busyLocked(); b != nil {
			return false, errOperationInProgress(true, cluster, in.Name, b.Name, b.Status)
		}
		if l := s.limits.ProfilesPerCluster; l > 0 && len(s.profiles) >= l {
			return false, errProfileLimit(cluster, in.Name)
		}
		subnets := in.Subnets
		if len(subnets) == 0 {
			subnets = s.cfg.PrivateSubnetIDs()
		}
		tags := in.Tags
		if tags == nil {
			tags = map[string]string{}
		}
		now := s.clock.Now().UTC()
		p := ProfileState{
			Profile: fargate.Profile{
				Name: in.Name, Selectors: in.Selectors, Subnets: slices.Clone(subnets), Status: fargate.StatusCreating,
				PodExecutionRoleARN: in.PodExecutionRoleARN,
			},
			ARN:                s.profileARN(in.Name),
			ClusterName:        cluster,
			CreatedAt:          now,
			Tags:               tags,
			Health:             Health{Issues: []Issue{}},
			ClientRequestToken: in.ClientRequestToken,
			StatusSince:        now,
		}
		p = p.clone()
		s.profiles = append(s.profiles, p)
		s.sort()
		s.pending = append(s.pending, change{p.Name, "", fargate.StatusCreating})
		out = p.clone()
		return true, nil
	})
	return out, err
}

// delete starts deleting a profile: DELETING, gone Timings.ProfileDelete
// later.
func (s *Store) delete(name string) (ProfileState, error) {
	cluster := s.cfg.Metadata.Name
	var out ProfileState
	err := s.update(func() (bool, error) {
		i := s.indexLocked(name)
		if i < 0 {
			return false, errProfileNotFound(cluster, name)
		}
		if b := s.busyLocked(); b != nil {
			return false, errOperationInProgress(false, cluster, name, b.Name, b.Status)
		}
		p := &s.profiles[i]
		from := p.Status
		p.Status, p.StatusSince = fargate.StatusDeleting, s.clock.Now().UTC()
		s.pending = append(s.pending, change{name, from, p.Status})
		out = p.clone()
		return true, nil
	})
	return out, err
}
