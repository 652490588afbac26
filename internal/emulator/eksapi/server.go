package eksapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// TickInterval is how often Run applies due lifecycle transitions.
const TickInterval = 100 * time.Millisecond

// PlatformVersion is the EKS platform version DescribeCluster reports.
const PlatformVersion = "eks.1"

// maxBodyBytes bounds request bodies.
const maxBodyBytes = 1 << 20

// ClusterInfo is what the emulator tells DescribeCluster about its control
// plane.
type ClusterInfo interface {
	// Endpoint is the Kubernetes API server URL, "https://127.0.0.1:6443".
	Endpoint() string
	// CertificateAuthority is the API server's CA certificate, PEM.
	CertificateAuthority() []byte
	// CreatedAt is when the cluster was created.
	CreatedAt() time.Time
	// FargateKubelets returns the Kubernetes minor version of the kubelet of
	// every Fargate node, by node name.
	FargateKubelets(ctx context.Context) (map[string]string, error)
	// InsightFacts reads what the upgrade insights are computed from.
	InsightFacts(ctx context.Context) (InsightFacts, error)
}

// Server serves the EKS API of one cluster over a Store.
type Server struct {
	cfg     *clusterconfig.Config
	store   *Store
	cluster ClusterInfo
	log     *slog.Logger
	handler http.Handler
}

// NewServer returns the EKS API of cfg's cluster, over store.
func NewServer(cfg *clusterconfig.Config, store *Store, cluster ClusterInfo) *Server {
	s := &Server{cfg: cfg, store: store, cluster: cluster, log: store.log}
	s.handler = http.HandlerFunc(s.serveHTTP)
	return s
}

// Handler returns the HTTP handler of the API. It accepts any credentials and
// does not check request signatures (the daemon refuses unsigned requests
// before they reach it).
func (s *Server) Handler() http.Handler { return s.handler }

// Refuse answers an error of type typ (the x-amzn-ErrorType header) and
// status as EKS does, without reading the request.
func (s *Server) Refuse(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("x-amzn-RequestId", uuid.NewString())
	s.writeError(w, &apiError{Type: typ, Status: status, Message: message})
}

// Run applies the Store's due lifecycle transitions every TickInterval, on the
// Store's clock, until ctx is done; it then returns nil.
func (s *Server) Run(ctx context.Context) error {
	t := s.store.clock.NewTicker(TickInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			if err := s.store.Tick(s.store.clock.Now()); err != nil {
				s.log.Warn("cannot save Fargate profile transitions", "err", err)
			}
		}
	}
}

// Serve serves the API on l and runs the lifecycle (Run) until ctx is done,
// then shuts the HTTP server down.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = s.Run(ctx)
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err = srv.Shutdown(shutdown)
		cancel()
		if serr := <-served; err == nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
	}
	<-runDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("serving the EKS API: %w", err)
	}
	return nil
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (s *Server) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &statusWriter{ResponseWriter: rw}
	w.Header().Set("x-amzn-RequestId", uuid.NewString())
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("EKS API handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
			if w.status == 0 {
				s.writeError(w, errServer("internal error"))
			}
		}
		s.log.Debug("EKS API request", "method", r.Method, "path", r.URL.Path, "status", w.status)
	}()
	s.route(w, r)
}

// route dispatches on the path segments, unescaped one by one so that names
// may hold any character.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	raw := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	seg := make([]string, len(raw))
	for i, p := range raw {
		v, err := url.PathUnescape(p)
		if err != nil {
			s.writeError(w, badRequest("The request path %q is not valid.", r.URL.EscapedPath()))
			return
		}
		seg[i] = v
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		s.writeError(w, badRequest("The query string is not valid: %v.", err))
		return
	}
	m := r.Method
	if m == http.MethodHead {
		m = http.MethodGet
	}
	switch {
	case len(seg) == 1 && seg[0] == "clusters" && m == http.MethodGet:
		s.listClusters(w, query)
	case len(seg) == 2 && seg[0] == "clusters" && m == http.MethodGet:
		s.describeCluster(w, seg[1])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "fargate-profiles" && m == http.MethodPost:
		s.createProfile(w, r, seg[1])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "fargate-profiles" && m == http.MethodGet:
		s.listProfiles(w, seg[1], query)
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "fargate-profiles" && m == http.MethodGet:
		s.describeProfile(w, seg[1], seg[3])
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "fargate-profiles" && m == http.MethodDelete:
		s.deleteProfile(w, seg[1], seg[3])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "updates" && m == http.MethodPost:
		s.updateClusterVersion(w, r, seg[1])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "updates" && m == http.MethodGet:
		s.listUpdates(w, seg[1], query)
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "updates" && m == http.MethodGet:
		s.describeUpdate(w, seg[1], seg[3], query)
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "insights" && m == http.MethodPost:
		s.listInsights(w, r, seg[1])
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "insights" && m == http.MethodGet:
		s.describeInsight(w, r, seg[1], seg[3])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "node-groups" && m == http.MethodPost:
		s.createNodegroup(w, r, seg[1])
	case len(seg) == 3 && seg[0] == "clusters" && seg[2] == "node-groups" && m == http.MethodGet:
		s.listNodegroups(w, seg[1], query)
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "node-groups" && m == http.MethodGet:
		s.describeNodegroup(w, seg[1], seg[3])
	case len(seg) == 4 && seg[0] == "clusters" && seg[2] == "node-groups" && m == http.MethodDelete:
		s.deleteNodegroup(w, seg[1], seg[3])
	case len(seg) == 5 && seg[0] == "clusters" && seg[2] == "node-groups" && seg[4] == "update-config" && m == http.MethodPost:
		s.updateNodegroupConfig(w, r, seg[1], seg[3])
	case len(seg) == 5 && seg[0] == "clusters" && seg[2] == "node-groups" && seg[4] == "update-version" && m == http.MethodPost:
		s.updateNodegroupVersion(w, r, seg[1], seg[3])
	default:
		s.writeError(w, errUnknownOperation(r.Method, r.URL.EscapedPath()))
	}
}

// checkCluster answers ResourceNotFoundException for any cluster but this one.
func (s *Server) checkCluster(w http.ResponseWriter, name string) bool {
	if name != s.cfg.Metadata.Name {
		s.writeError(w, errClusterNotFound(name))
		return false
	}
	return true
}

// epochSeconds is a timestamp written as the EKS API does: seconds since the
// epoch, a JSON number with a fraction.
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)), nil
}

// profileJSON is the FargateProfile shape of the API.
type profileJSON struct {
	FargateProfileName  string             `json:"fargateProfileName"`
	FargateProfileArn   string             `json:"fargateProfileArn"`
	ClusterName         string             `json:"clusterName"`
	CreatedAt           epochSeconds       `json:"createdAt"`
	PodExecutionRoleArn string             `json:"podExecutionRoleArn"`
	Subnets             []string           `json:"subnets"`
	Selectors           []fargate.Selector `json:"selectors"`
	Status              string             `json:"status"`
	Tags                map[string]string  `json:"tags"`
	Health              Health             `json:"health"`
}

func toJSON(p ProfileState) map[string]profileJSON {
	out := profileJSON{
		FargateProfileName:  p.Name,
		FargateProfileArn:   p.ARN,
		ClusterName:         p.ClusterName,
		CreatedAt:           epochSeconds(p.CreatedAt),
		PodExecutionRoleArn: p.PodExecutionRoleARN,
		Subnets:             p.Subnets,
		Selectors:           p.Selectors,
		Status:              p.Status,
		Tags:                p.Tags,
		Health:              p.Health,
	}
	if out.Subnets == nil {
		out.Subnets = []string{}
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if out.Health.Issues == nil {
		out.Health.Issues = []Issue{}
	}
	return map[string]profileJSON{"fargateProfile": out}
}

// createRequest is the body of CreateFargateProfile.
type createRequest struct {
	FargateProfileName  string             `json:"fargateProfileName"`
	PodExecutionRoleArn string             `json:"podExecutionRoleArn"`
	Subnets             []string           `json:"subnets"`
	Selectors           []fargate.Selector `json:"selectors"`
	ClientRequestToken  string             `json:"clientRequestToken"`
	Tags                map[string]string  `json:"tags"`
}

// decodeBody reads a JSON request body into v; an empty body is an empty
// request.
func decodeBody(body []byte, v any) *apiError {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badRequest("The request body is not valid: %s must be of type %s.", te.Field, jsonType(te.Type.Kind().String()))
		}
		return badRequest("The request body is not valid JSON.")
	}
	return nil
}

// decode reads the request's JSON body into v, answering the error itself
// when it cannot.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		s.writeError(w, badRequest("The request body cannot be read: %v.", err))
		return false
	}
	if aerr := decodeBody(body, v); aerr != nil {
		s.writeError(w, aerr)
		return false
	}
	return true
}

func jsonType(kind string) string {
	switch kind {
	case "slice":
		return "list"
	case "map", "struct":
		return "structure"
	default:
		return kind
	}
}

func (s *Server) createProfile(w http.ResponseWriter, r *http.Request, cluster string) {
	var req createRequest
	if !s.decode(w, r, &req) || !s.checkCluster(w, cluster) {
		return
	}
	p, err := s.store.create(createInput{
		Name:                req.FargateProfileName,
		PodExecutionRoleARN: req.PodExecutionRoleArn,
		Subnets:             req.Subnets,
		Selectors:           req.Selectors,
		ClientRequestToken:  req.ClientRequestToken,
		Tags:                req.Tags,
	})
	respond(s, w, p, err, toJSON)
}

func (s *Server) describeProfile(w http.ResponseWriter, cluster, name string) {
	if !s.checkCluster(w, cluster) {
		return
	}
	p, err := s.store.profile(name)
	respond(s, w, p, err, toJSON)
}

func (s *Server) deleteProfile(w http.ResponseWriter, cluster, name string) {
	if !s.checkCluster(w, cluster) {
		return
	}
	p, err := s.store.delete(name)
	respond(s, w, p, err, toJSON)
}

// page reads maxResults (1..100, default 100) and nextToken. Texts composed
// (unconfirmed).
func page(q url.Values) (limit int, after string, aerr *apiError) {
	limit = 100
	if v, ok := q["maxResults"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > 100 {
			return 0, "", invalidParameter("", "", "maxResults must be an integer between 1 and 100.")
		}
		limit = n
	}
	if v, ok := q["nextToken"]; ok && v[0] != "" {
		b, err := base64.RawURLEncoding.DecodeString(v[0])
		if err != nil || !strings.HasPrefix(string(b), tokenPrefix) {
			return 0, "", invalidParameter("", "", "The nextToken is not valid.")
		}
		after = strings.TrimPrefix(string(b), tokenPrefix)
	}
	return limit, after, nil
}

// tokenPrefix starts every nextToken, which is the last name of the
// previous page.
const tokenPrefix = "fargatekit/v1/"

// paginate returns the names after "after", at most limit, and the token of
// the next page (nil on the last).
func paginate(names []string, limit int, after string) ([]string, *string) {
	slices.Sort(names)
	start := 0
	if after != "" {
		start, _ = slices.BinarySearch(names, after)
		for start < len(names) && names[start] <= after {
			start++
		}
	}
	end := min(start+limit, len(names))
	out := slices.Clone(names[start:end])
	if out == nil {
		out = []string{}
	}
	if end >= len(names) {
		return out, nil
	}
	tok := base64.RawURLEncoding.EncodeToString([]byte(tokenPrefix + names[end-1]))
	return out, &tok
}

func (s *Server) listProfiles(w http.ResponseWriter, cluster string, q url.Values) {
	s.list(w, cluster, q, "fargateProfileNames", func() ([]string, error) { return s.store.names(), nil })
}

// list answers a List operation of a cluster's resources: a page of the
// names all returns, under key, and the token of the next page.
func (s *Server) list(w http.ResponseWriter, cluster string, q url.Values, key string, all func() ([]string, error)) {
	limit, after, aerr := page(q)
	if aerr != nil {
		aerr.ClusterName = cluster
		s.writeError(w, aerr)
		return
	}
	if !s.checkCluster(w, cluster) {
		return
	}
	names, err := all()
	if err != nil {
		s.writeError(w, err)
		return
	}
	names, next := paginate(names, limit, after)
	s.writeJSON(w, map[string]any{key: names, "nextToken": next})
}

func (s *Server) listClusters(w http.ResponseWriter, q url.Values) {
	limit, after, aerr := page(q)
	if aerr != nil {
		s.writeError(w, aerr)
		return
	}
	names, next := paginate([]string{s.cfg.Metadata.Name}, limit, after)
	s.writeJSON(w, struct {
		Clusters  []string `json:"clusters"`
		NextToken *string  `json:"nextToken"`
	}{names, next})
}

// clusterJSON is the Cluster shape of the API, with the fields the emulator
// knows.
type clusterJSON struct {
	Name                 string            `json:"name"`
	Arn                  string            `json:"arn"`
	CreatedAt            epochSeconds      `json:"createdAt"`
	Version              string            `json:"version"`
	Endpoint             string            `json:"endpoint"`
	RoleArn              string            `json:"roleArn"`
	ResourcesVpcConfig   vpcConfigJSON     `json:"resourcesVpcConfig"`
	Status               string            `json:"status"`
	CertificateAuthority certificateJSON   `json:"certificateAuthority"`
	PlatformVersion      string            `json:"platformVersion"`
	Tags                 map[string]string `json:"tags"`
	Health               Health            `json:"health"`
}

type vpcConfigJSON struct {
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	VpcID                  string   `json:"vpcId"`
	EndpointPublicAccess   bool     `json:"endpointPublicAccess"`
	EndpointPrivateAccess  bool     `json:"endpointPrivateAccess"`
	PublicAccessCidrs      []string `json:"publicAccessCidrs"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
}

type certificateJSON struct {
	Data string `json:"data"`
}

func (s *Server) describeCluster(w http.ResponseWriter, name string) {
	if !s.checkCluster(w, name) {
		return
	}
	c := s.cfg
	cp := s.store.Cluster()
	subnets := c.PrivateSubnetIDs()
	for _, az := range c.AvailabilityZones {
		if sn, ok := c.VPC.Subnets.Public[az]; ok {
			subnets = append(subnets, sn.ID)
		}
	}
	if subnets == nil {
		subnets = []string{}
	}
	s.writeJSON(w, map[string]clusterJSON{"cluster": {
		Name:      c.Metadata.Name,
		Arn:       c.ClusterARN(),
		CreatedAt: epochSeconds(s.cluster.CreatedAt()),
		Version:   cp.Version,
		Endpoint:  s.cluster.Endpoint(),
		RoleArn:   fmt.Sprintf("arn:aws:iam::%s:role/%s-cluster-role", c.AccountID, c.Metadata.Name),
		ResourcesVpcConfig: vpcConfigJSON{
			SubnetIDs:             subnets,
			SecurityGroupIDs:      []string{},
			VpcID:                 c.VPC.ID,
			EndpointPublicAccess:  true,
			EndpointPrivateAccess: true,
			PublicAccessCidrs:     []string{"0.0.0.0/0"},
		},
		Status:               cp.Status,
		CertificateAuthority: certificateJSON{Data: base64.StdEncoding.EncodeToString(s.cluster.CertificateAuthority())},
		PlatformVersion:      cp.PlatformVersion,
		Tags:                 map[string]string{},
		Health:               Health{Issues: []Issue{}},
	}})
}

// respond answers err, or v in the shape the API writes it.
func respond[T, J any](s *Server, w http.ResponseWriter, v T, err error, shape func(T) J) {
	if err != nil {
		s.writeError(w, err)
		return
	}
	s.writeJSON(w, shape(v))
}

func (s *Server) writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		s.writeError(w, errServer("encoding the response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// writeError answers an error the way EKS does: the type in the
// x-amzn-errortype header, a JSON body with message and, when known,
// clusterName and fargateProfileName. Errors that are not *apiError are
// ServerException (500).
func (s *Server) writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		s.log.Error("EKS API failed", "err", err)
		e = errServer("Internal failure: %v", err)
	}
	body := map[string]string{"message": e.Message}
	if e.ClusterName != "" {
		body["clusterName"] = e.ClusterName
	}
	if e.FargateProfileName != "" {
		body["fargateProfileName"] = e.FargateProfileName
	}
	if e.NodegroupName != "" {
		body["nodegroupName"] = e.NodegroupName
	}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", e.Type)
	w.WriteHeader(e.Status)
	_, _ = w.Write(data)
}
