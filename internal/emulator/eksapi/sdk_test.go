package eksapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

var arnRE = regexp.MustCompile(`^arn:aws:eks:us-east-1:111122223333:fargateprofile/fargatekit/([^/]+)/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestWaiters runs a profile through its whole lifecycle on the real clock
// with short timings, waiting with the SDK's own waiters.
func TestWaiters(t *testing.T) {
	e := newEnv(t, func(c *clusterconfig.Config) {
		c.Timings.ProfileCreate.Duration = 300 * time.Millisecond
		c.Timings.ProfileDelete.Duration = 300 * time.Millisecond
	}, eksapi.WithClock(clock.RealClock{}))
	ctx := context.Background()
	start := time.Now()

	in := createInput("web")
	in.Selectors = []types.FargateProfileSelector{{Namespace: aws.String("web"), Labels: map[string]string{"app": "web"}}}
	in.Tags = map[string]string{"team": "a"}
	created, err := e.client.CreateFargateProfile(ctx, in)
	if err != nil {
		t.Fatalf("CreateFargateProfile: %v", err)
	}
	got, err := e.describe("web")
	if err != nil {
		t.Fatalf("DescribeFargateProfile: %v", err)
	}
	want := &types.FargateProfile{
		FargateProfileName:  aws.String("web"),
		ClusterName:         aws.String(cluster),
		PodExecutionRoleArn: aws.String(roleARN),
		Subnets:             []string{"subnet-private1", "subnet-private2", "subnet-private3"},
		Selectors:           []types.FargateProfileSelector{{Namespace: aws.String("web"), Labels: map[string]string{"app": "web"}}},
		Status:              types.FargateProfileStatusCreating,
		Tags:                map[string]string{"team": "a"},
		Health:              &types.FargateProfileHealth{Issues: []types.FargateProfileIssue{}},
	}
	opts := cmp.Options{
		cmpopts.IgnoreUnexported(types.FargateProfile{}, types.FargateProfileSelector{}, types.FargateProfileHealth{}),
		cmpopts.IgnoreFields(types.FargateProfile{}, "FargateProfileArn", "CreatedAt"),
		cmpopts.EquateEmpty(),
	}
	for what, p := range map[string]*types.FargateProfile{"create": created.FargateProfile, "describe": got} {
		if diff := cmp.Diff(want, p, opts); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	if m := arnRE.FindStringSubmatch(aws.ToString(got.FargateProfileArn)); m == nil || m[1] != "web" {
		t.Errorf("ARN %s does not match %s", aws.ToString(got.FargateProfileArn), arnRE)
	}
	if aws.ToString(got.FargateProfileArn) != aws.ToString(created.FargateProfile.FargateProfileArn) {
		t.Errorf("describe ARN %s != create ARN %s", aws.ToString(got.FargateProfileArn), aws.ToString(created.FargateProfile.FargateProfileArn))
	}
	if c := aws.ToTime(got.CreatedAt); c.Before(start.Add(-time.Second)) || c.After(time.Now().Add(time.Second)) {
		t.Errorf("createdAt %v is not about now", c)
	}

	fast := func(o *eks.FargateProfileActiveWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	}
	active, err := eks.NewFargateProfileActiveWaiter(e.client, fast).WaitForOutput(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String("web")}, 10*time.Second)
	if err != nil {
		t.Fatalf("FargateProfileActiveWaiter: %v", err)
	}
	if active.FargateProfile.Status != types.FargateProfileStatusActive {
		t.Errorf("status after the waiter = %s", active.FargateProfile.Status)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("ACTIVE after %v, before Timings.ProfileCreate", d)
	}

	deleted, err := e.client.DeleteFargateProfile(ctx, &eks.DeleteFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String("web")})
	if err != nil {
		t.Fatalf("DeleteFargateProfile: %v", err)
	}
	if deleted.FargateProfile.Status != types.FargateProfileStatusDeleting {
		t.Errorf("status after delete = %s", deleted.FargateProfile.Status)
	}
	fastDel := func(o *eks.FargateProfileDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	}
	if err := eks.NewFargateProfileDeletedWaiter(e.client, fastDel).Wait(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String("web")}, 10*time.Second); err != nil {
		t.Fatalf("FargateProfileDeletedWaiter: %v", err)
	}
	if got := e.store.Profiles(); len(got) != 0 {
		t.Errorf("profiles left after delete: %v", got)
	}
}

// TestRules checks each refusal of CreateFargateProfile and
// DeleteFargateProfile, the typed SDK error and its text.
func TestRules(t *testing.T) {
	tenProfiles := func(c *clusterconfig.Config) {
		for i := range 10 {
			c.FargateProfiles = append(c.FargateProfiles, clusterconfig.Profile{Name: fmt.Sprintf("p%02d", i), Selectors: []fargate.Selector{{Namespace: "ns"}}})
		}
	}
	seeded := func(c *clusterconfig.Config) {
		c.FargateProfiles = []clusterconfig.Profile{{Name: "seed", Selectors: []fargate.Selector{{Namespace: "kube-system"}}}}
	}
	labels := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	tests := []struct {
		name   string
		config func(*clusterconfig.Config)
		before func(t *testing.T, e *env)
		create *eks.CreateFargateProfileInput // else delete
		delete string
		want   string
	}{{
		name:   "create while another is CREATING",
		before: func(t *testing.T, e *env) { e.create(t, "first") },
		create: createInput("second"),
		want:   "*types.ResourceInUseException: Cannot create Fargate Profile second because cluster fargatekit currently has Fargate profile first in status CREATING",
	}, {
		name:   "create while another is DELETING",
		config: seeded,
		before: func(t *testing.T, e *env) { e.delete(t, "seed") },
		create: createInput("second"),
		want:   "*types.ResourceInUseException: Cannot create Fargate Profile second because cluster fargatekit currently has Fargate profile seed in status DELETING",
	}, {
		name: "delete while another is DELETING",
		config: func(c *clusterconfig.Config) {
			seeded(c)
			c.FargateProfiles = append(c.FargateProfiles, clusterconfig.Profile{Name: "other", Selectors: []fargate.Selector{{Namespace: "x"}}})
		},
		before: func(t *testing.T, e *env) { e.delete(t, "seed") },
		delete: "other",
		want:   "*types.ResourceInUseException: Cannot delete Fargate profile other because cluster fargatekit currently has Fargate profile seed in status DELETING",
	}, {
		name:   "delete while another is CREATING",
		config: seeded,
		before: func(t *testing.T, e *env) { e.create(t, "new") },
		delete: "seed",
		want:   "*types.ResourceInUseException: Cannot delete Fargate profile seed because cluster fargatekit currently has Fargate profile new in status CREATING",
	}, {
		name:   "duplicate name of an ACTIVE profile",
		config: seeded,
		create: createInput("seed"),
		want:   "*types.ResourceInUseException: A Fargate Profile already exists with this name in this cluster.",
	}, {
		name:   "duplicate name of a CREATING profile",
		before: func(t *testing.T, e *env) { e.create(t, "dup") },
		create: createInput("dup"),
		want:   "*types.ResourceInUseException: A Fargate Profile already exists with this name in this cluster.",
	}, {
		name:   "reserved prefix",
		create: createInput("eks-web"),
		want:   "*types.InvalidParameterException: The fargate profile name starts with the reserved prefix: 'eks-'.",
	}, {
		name:   "empty name",
		create: createInput(""),
		want:   "*types.InvalidParameterException: fargateProfileName is required.",
	}, {
		name:   "invalid name",
		create: createInput("web app"),
		want:   `*types.InvalidParameterException: fargateProfileName "web app" is invalid: it must start with a letter or digit, contain only letters, digits, - and _, and be at most 100 characters long.`,
	}, {
		name: "empty role",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.PodExecutionRoleArn = aws.String("")
			return in
		}(),
		want: "*types.InvalidParameterException: podExecutionRoleArn is required.",
	}, {
		name: "role with a path",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.PodExecutionRoleArn = aws.String("arn:aws:iam::111122223333:role/eks/pods")
			return in
		}(),
		want: `*types.InvalidParameterException: podExecutionRoleArn "arn:aws:iam::111122223333:role/eks/pods" is not valid: the pod execution role must have no path other than /.`,
	}, {
		name:   "no selectors",
		create: func() *eks.CreateFargateProfileInput { in := createInput("web"); in.Selectors = nil; return in }(),
		want:   "*types.InvalidParameterException: Fargate Profile requires at least one selector.",
	}, {
		name: "selector without namespace",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.Selectors = append(in.Selectors, types.FargateProfileSelector{})
			return in
		}(),
		want: "*types.InvalidParameterException: Fargate Profile must have at least one selector with at least one namespace value.",
	}, {
		name: "six selectors",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			for range 5 {
				in.Selectors = append(in.Selectors, types.FargateProfileSelector{Namespace: aws.String("ns")})
			}
			return in
		}(),
		want: "*types.InvalidParameterException: Request contains more than 5 Selectors",
	}, {
		name: "five selectors, five labels each",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			s := types.FargateProfileSelector{Namespace: aws.String("ns"), Labels: labels(5)}
			in.Selectors = []types.FargateProfileSelector{s, s, s, s, s}
			return in
		}(),
	}, {
		name: "six labels",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.Selectors[0].Labels = labels(6)
			return in
		}(),
		want: "*types.InvalidParameterException: Request contains Selector with more than 5 Label pairs",
	}, {
		name:   "51 tags",
		create: func() *eks.CreateFargateProfileInput { in := createInput("web"); in.Tags = labels(51); return in }(),
		want:   "*types.InvalidParameterException: tags: 51 tags given, at most 50 are allowed.",
	}, {
		name:   "eleventh profile",
		config: tenProfiles,
		create: createInput("eleventh"),
		want:   "*types.ResourceLimitExceededException: Fargate Profile limit exceeded for cluster.",
	}, {
		name: "public subnet",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.Subnets = []string{"subnet-private1", "subnet-public2"}
			return in
		}(),
		want: "*types.InvalidParameterException: Subnet subnet-public2 provided in Fargate Profile is not a private subnet",
	}, {
		name: "subnet of another VPC",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.Subnets = []string{"subnet-0abc"}
			return in
		}(),
		want: "*types.InvalidParameterException: Subnet subnet-0abc provided in Fargate Profile is not a subnet of the cluster's VPC vpc-0fa76a7e0000emu",
	}, {
		name: "unknown cluster",
		create: func() *eks.CreateFargateProfileInput {
			in := createInput("web")
			in.ClusterName = aws.String("prod")
			return in
		}(),
		want: "*types.ResourceNotFoundException: No cluster found for name: prod.",
	}, {
		name:   "delete an unknown profile",
		delete: "nope",
		want:   "*types.ResourceNotFoundException: No Fargate Profile found with name: nope.",
	}, {
		name:   "delete an ACTIVE profile",
		config: seeded,
		delete: "seed",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.config)
			if tt.before != nil {
				tt.before(t, e)
			}
			var err error
			if tt.create != nil {
				_, err = e.client.CreateFargateProfile(context.Background(), tt.create)
			} else {
				_, err = e.client.DeleteFargateProfile(context.Background(), &eks.DeleteFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String(tt.delete)})
			}
			if diff := cmp.Diff(tt.want, apiError(err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotFound checks the answers about unknown clusters and profiles.
func TestNotFound(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	calls := []struct {
		name string
		call func() error
		want string
	}{{
		name: "DescribeCluster",
		call: func() error {
			_, err := e.client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod")})
			return err
		},
		want: "*types.ResourceNotFoundException: No cluster found for name: prod.",
	}, {
		name: "DescribeFargateProfile of an unknown cluster",
		call: func() error {
			_, err := e.client.DescribeFargateProfile(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String("prod"), FargateProfileName: aws.String("web")})
			return err
		},
		want: "*types.ResourceNotFoundException: No cluster found for name: prod.",
	}, {
		name: "ListFargateProfiles of an unknown cluster",
		call: func() error {
			_, err := e.client.ListFargateProfiles(ctx, &eks.ListFargateProfilesInput{ClusterName: aws.String("prod")})
			return err
		},
		want: "*types.ResourceNotFoundException: No cluster found for name: prod.",
	}, {
		name: "DeleteFargateProfile of an unknown cluster",
		call: func() error {
			_, err := e.client.DeleteFargateProfile(ctx, &eks.DeleteFargateProfileInput{ClusterName: aws.String("prod"), FargateProfileName: aws.String("web")})
			return err
		},
		want: "*types.ResourceNotFoundException: No cluster found for name: prod.",
	}, {
		name: "DescribeFargateProfile of an unknown profile",
		call: func() error {
			_, err := e.describe("web")
			return err
		},
		want: "*types.ResourceNotFoundException: No Fargate Profile found with name: web.",
	}}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, apiError(c.call())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLifecycleFakeClock follows the transitions on a fake clock, with the
// OnChange notifications.
func TestLifecycleFakeClock(t *testing.T) {
	e := newEnv(t, nil)
	var mu sync.Mutex
	var changes []string
	e.store.OnChange(func(name, from, to string) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, fmt.Sprintf("%s %s->%s", name, from, to))
	})
	e.create(t, "web")
	steps := []struct {
		step       time.Duration
		want       string
		wantActive []string
	}{
		{0, "CREATING", nil},
		{2*time.Minute - time.Second, "CREATING", nil},
		{time.Second, "ACTIVE", []string{"web"}},
	}
	for _, s := range steps {
		e.clock.Step(s.step)
		if got := e.status(t, "web"); got != s.want {
			t.Errorf("after %v: status %s, want %s", s.step, got, s.want)
		}
		if err := e.store.Tick(e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		var active []string
		for _, p := range e.store.Active() {
			active = append(active, p.Name)
			if diff := cmp.Diff([]string{"subnet-private1", "subnet-private2", "subnet-private3"}, p.Subnets); diff != "" {
				t.Errorf("Active() subnets (-want +got):\n%s", diff)
			}
		}
		if diff := cmp.Diff(s.wantActive, active); diff != "" {
			t.Errorf("Active() (-want +got):\n%s", diff)
		}
	}
	e.delete(t, "web")
	e.clock.Step(3*time.Minute - time.Second)
	if got := e.status(t, "web"); got != "DELETING" {
		t.Errorf("status %s, want DELETING", got)
	}
	e.clock.Step(time.Second)
	if err := e.store.Tick(e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, "web"); got != "*types.ResourceNotFoundException: No Fargate Profile found with name: web." {
		t.Errorf("status after ProfileDelete: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"web ->CREATING", "web CREATING->ACTIVE", "web ACTIVE->DELETING", "web DELETING->"}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("OnChange (-want +got):\n%s", diff)
	}
}

// TestRunTicks checks that Run applies transitions without any API call.
func TestRunTicks(t *testing.T) {
	e := newEnv(t, nil)
	got := make(chan string, 10)
	e.store.OnChange(func(name, from, to string) { got <- from + "->" + to })
	e.create(t, "web")
	if c := <-got; c != "->CREATING" {
		t.Fatalf("first change %s", c)
	}
	deadline := time.After(10 * time.Second)
	for {
		// Run's ticker is on the fake clock: step it until Run ticks.
		e.clock.Step(time.Minute)
		select {
		case c := <-got:
			if c != "CREATING->ACTIVE" {
				t.Fatalf("change %s", c)
			}
			return
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("Run did not make the profile ACTIVE")
		}
	}
}

// TestPagination lists 12 profiles five at a time, with the quota raised.
func TestPagination(t *testing.T) {
	limits := eksapi.DefaultLimits
	limits.ProfilesPerCluster = 20
	e := newEnv(t, nil, eksapi.WithLimits(limits))
	var want []string
	for i := range 12 {
		name := fmt.Sprintf("p%02d", 11-i) // created out of order
		e.create(t, name)
		e.clock.Step(2 * time.Minute)
		want = append([]string{name}, want...)
	}
	var pages [][]string
	p := eks.NewListFargateProfilesPaginator(e.client, &eks.ListFargateProfilesInput{ClusterName: aws.String(cluster), MaxResults: aws.Int32(5)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListFargateProfiles: %v", err)
		}
		pages = append(pages, out.FargateProfileNames)
	}
	if diff := cmp.Diff([][]string{want[:5], want[5:10], want[10:]}, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	out, err := e.client.ListFargateProfiles(context.Background(), &eks.ListFargateProfilesInput{ClusterName: aws.String(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.FargateProfileNames); diff != "" || out.NextToken != nil {
		t.Errorf("one page (-want +got):\n%s\nnextToken %v", diff, out.NextToken)
	}
	// A thirteenth page token past the end, and the quota still applies.
	_, err = e.client.ListFargateProfiles(context.Background(), &eks.ListFargateProfilesInput{ClusterName: aws.String(cluster), NextToken: aws.String("bm9wZQ")})
	if got := apiError(err); got != "*types.InvalidParameterException: The nextToken is not valid." {
		t.Errorf("bad nextToken: %s", got)
	}
}

// TestIdempotency repeats a create with the same clientRequestToken.
func TestIdempotency(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	in := createInput("web")
	in.ClientRequestToken = aws.String("token-1")
	first, err := e.client.CreateFargateProfile(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.client.CreateFargateProfile(ctx, in)
	if err != nil {
		t.Fatalf("repeated create: %v", err)
	}
	if a, b := aws.ToString(first.FargateProfile.FargateProfileArn), aws.ToString(again.FargateProfile.FargateProfileArn); a != b {
		t.Errorf("repeated create gave ARN %s, first %s", b, a)
	}
	other := createInput("other")
	other.ClientRequestToken = aws.String("token-1")
	_, err = e.client.CreateFargateProfile(ctx, other)
	if got, want := apiError(err), "*types.InvalidParameterException: clientRequestToken token-1 was already used to create Fargate profile web."; got != want {
		t.Errorf("token reused for another name: %s, want %s", got, want)
	}
	in.ClientRequestToken = aws.String("token-2")
	_, err = e.client.CreateFargateProfile(ctx, in)
	if got, want := apiError(err), "*types.ResourceInUseException: A Fargate Profile already exists with this name in this cluster."; got != want {
		t.Errorf("new token, same name: %s, want %s", got, want)
	}
	if n := len(e.store.Profiles()); n != 1 {
		t.Errorf("%d profiles, want 1", n)
	}
}

// TestConcurrentCreates races creates: one wins, the others are refused.
func TestConcurrentCreates(t *testing.T) {
	e := newEnv(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = e.client.CreateFargateProfile(context.Background(), createInput(fmt.Sprintf("p%d", i)))
			_ = e.store.Active()
			_ = e.store.Profiles()
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if got := apiError(err); !regexp.MustCompile(`^\*types.ResourceInUseException: Cannot create Fargate Profile p\d because cluster fargatekit currently has Fargate profile p\d in status CREATING$`).MatchString(got) {
			t.Errorf("unexpected error %s", got)
		}
	}
	if ok != 1 {
		t.Errorf("%d creates succeeded, want 1", ok)
	}
}

// TestDescribeCluster checks DescribeCluster and ListClusters.
func TestDescribeCluster(t *testing.T) {
	e := newEnv(t, nil)
	out, err := e.client.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	c := out.Cluster
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data))
	if err != nil {
		t.Fatalf("certificateAuthority.data: %v", err)
	}
	type summary struct {
		Name, ARN, Version, Endpoint, Status, Platform, VPC, CA string
		Subnets                                                 []string
		CreatedAt                                               time.Time
	}
	got := summary{
		Name: aws.ToString(c.Name), ARN: aws.ToString(c.Arn), Version: aws.ToString(c.Version), Endpoint: aws.ToString(c.Endpoint),
		Status: string(c.Status), Platform: aws.ToString(c.PlatformVersion), VPC: aws.ToString(c.ResourcesVpcConfig.VpcId),
		CA: string(ca), Subnets: c.ResourcesVpcConfig.SubnetIds, CreatedAt: aws.ToTime(c.CreatedAt).UTC(),
	}
	want := summary{
		Name: cluster, ARN: "arn:aws:eks:us-east-1:111122223333:cluster/fargatekit", Version: "1.35", Endpoint: "https://127.0.0.1:6443",
		Status: "ACTIVE", Platform: eksapi.PlatformVersion, VPC: "vpc-0fa76a7e0000emu", CA: caPEM,
		Subnets:   []string{"subnet-private1", "subnet-private2", "subnet-private3", "subnet-public1", "subnet-public2", "subnet-public3"},
		CreatedAt: t0.Add(-time.Hour),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DescribeCluster (-want +got):\n%s", diff)
	}
	list, err := e.client.ListClusters(context.Background(), &eks.ListClustersInput{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{cluster}, list.Clusters); diff != "" || list.NextToken != nil {
		t.Errorf("ListClusters (-want +got):\n%s", diff)
	}
}
