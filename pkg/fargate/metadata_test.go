package fargate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestMetadataClientsData: the embedded list parses, and a broken entry
// is refused with its name.
func TestMetadataClientsData(t *testing.T) {
	if len(MetadataClients) < 6 {
		t.Fatalf("%d metadata clients", len(MetadataClients))
	}
	for data, want := range map[string]string{
		"- {name: x, repositories: [a], needs: [{what: y}], fixedIn: 1.2}\n": `metadata client "x"`,
		"- {name: x, repositories: ['[a'], needs: [{what: y}]}\n":            "syntax error in pattern",
		"- {name: x, repositories: [a]}\n":                                   `metadata client "x"`,
		"- {name: x, colour: blue}\n":                                        "unknown field",
		"- {name: x, repositories: [a], needs: [{what: its region}]}\n":      `metadata client "x": nothing tells it its region`,
	} {
		if _, err := parseMetadataClients([]byte(data)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", data, err, want)
		}
	}
}

func TestMetadataClient(t *testing.T) {
	for image, want := range map[string]string{
		"public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1":                                "AWS Load Balancer Controller",
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-load-balancer-controller:v2.7": "AWS Load Balancer Controller",
		"877085696533.dkr.ecr.af-south-1.amazonaws.com/amazon/aws-load-balancer-controller":     "AWS Load Balancer Controller",
		"public.ecr.aws/eks/aws-load-balancer-controller@sha256:" + strings.Repeat("a", 64):     "AWS Load Balancer Controller",
		"registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.9":                                "cluster-autoscaler",
		"registry.k8s.io/autoscaling/cluster-autoscaler:1.29.0":                                 "cluster-autoscaler",
		"registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.0":                                "",
		"registry.k8s.io/autoscaling/cluster-autoscaler:latest":                                 "",
		"public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver:v1.7.6":                        "AWS EFS CSI driver",
		"public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver:v1.7.7":                        "",
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efs-csi-driver:v1.7.7-eksbuild.1": "",
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efs-csi-driver:v1.7.6-eksbuild.2": "AWS EFS CSI driver",
		"public.ecr.aws/efs-csi-driver/amazon/aws-efs-csi-driver:v1.7.7-rc.1":                   "AWS EFS CSI driver",
		"example.com/mirror/aws-load-balancer-controller:v2.8.1":                                "",
		"aws-load-balancer-controller":                                                          "",
		"::not an image":                                                                        "",
	} {
		got := ""
		if c, ok := metadataClient(image); ok {
			got = c.Name
		}
		if got != want {
			t.Errorf("%s: %q, want %q", image, got, want)
		}
	}
}

func TestMetadataUses(t *testing.T) {
	lbc := corev1.Container{Name: "c", Image: "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1", Args: []string{"--cluster-name=x"}}
	noIRSA := Settings{NoIRSARegion: true}
	tests := []struct {
		name string
		c    corev1.Container
		s    Settings
		want []string // Field: client or address: unmet needs
	}{
		{name: "the VPC ID, the region from IRSA", c: lbc, want: []string{"containers[0].image AWS Load Balancer Controller: the VPC ID"}},
		{name: "without IRSA's region", c: lbc, s: noIRSA, want: []string{"containers[0].image AWS Load Balancer Controller: the region, the VPC ID"}},
		{name: "told by flags, the second as the next argument", s: noIRSA,
			c: corev1.Container{Name: "c", Image: lbc.Image, Args: []string{"--aws-region=eu-west-1", "--aws-vpc-id", "vpc-1"}}},
		{name: "a flag without its value tells nothing", s: noIRSA,
			c:    corev1.Container{Name: "c", Image: lbc.Image, Args: []string{"--aws-vpc-id", "--aws-region"}},
			want: []string{"containers[0].image AWS Load Balancer Controller: the region, the VPC ID"}},
		{name: "an empty flag tells nothing", s: noIRSA,
			c:    corev1.Container{Name: "c", Image: lbc.Image, Command: []string{"/controller", "--aws-region=", "--aws-vpc-id=vpc-1"}, Env: []corev1.EnvVar{{Name: "AWS_REGION"}}},
			want: []string{"containers[0].image AWS Load Balancer Controller: the region"}},
		{name: "a variable from a Secret", s: noIRSA,
			c: corev1.Container{Name: "c", Image: "public.ecr.aws/karpenter/controller:1.1.1", Env: []corev1.EnvVar{{Name: "AWS_REGION", ValueFrom: &corev1.EnvVarSource{}}}}},
		{name: "URLs of IMDS, once per field; bare addresses and proxy lists keep it out",
			c: corev1.Container{Name: "c", Image: "x", Command: []string{"curl", "http://169.254.169.254/latest", "iptables -A OUTPUT -d 169.254.169.254 -j DROP"},
				Args: []string{"http://[fd00:ec2::254]/latest https://169.254.169.254"},
				Env: []corev1.EnvVar{{Name: "A", Value: "http://169.254.170.2"}, {Name: "NO_PROXY", Value: "http://169.254.169.254"}, {Name: "no_proxy", Value: "169.254.169.254"},
					{Name: "AWS_EC2_METADATA_SERVICE_ENDPOINT", Value: "http://[fd00:ec2::254]"}}},
			want: []string{"containers[0].env[3].value fd00:ec2::254", "containers[0].command[1] 169.254.169.254", "containers[0].args[0] 169.254.169.254"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, u := range MetadataUses(&corev1.PodSpec{Containers: []corev1.Container{tt.c}}, tt.s) {
				if u.Client == nil {
					got = append(got, u.Field+" "+u.Address)
					continue
				}
				var needs []string
				for _, n := range u.Unmet {
					needs = append(needs, n.What)
				}
				got = append(got, u.Field+" "+u.Client.Name+": "+strings.Join(needs, ", "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzMetadataUses: any image, argument and variable: no panic, and every
// use points at a field of the container.
func FuzzMetadataUses(f *testing.F) {
	f.Add("public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1", "--aws-vpc-id=", "AWS_REGION", "169.254.169.254")
	f.Add("registry.k8s.io/autoscaling/cluster-autoscaler:v1.2.3-rc.1+x", "--aws-region", "", "")
	f.Add("*.dkr.ecr.*.amazonaws.com/amazon/aws-load-balancer-controller", "", "X", "fd00:ec2::254")
	f.Fuzz(func(t *testing.T, image, arg, env, value string) {
		c := corev1.Container{Name: "c", Image: image, Args: []string{arg}, Env: []corev1.EnvVar{{Name: env, Value: value}}}
		for _, s := range []Settings{{}, {NoIRSARegion: true}} {
			for _, u := range MetadataUses(&corev1.PodSpec{InitContainers: []corev1.Container{c}, Containers: []corev1.Container{c}}, s) {
				if !strings.HasPrefix(u.Field, "containers[0].") && !strings.HasPrefix(u.Field, "initContainers[0].") || (u.Client == nil) == (u.Address == "") {
					t.Errorf("use %+v", u)
				}
			}
		}
	})
}
