package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func service(ip string, port int32, target intstr.IntOrString) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"},
		Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip},
			Ports: []corev1.ServicePort{{Port: port, TargetPort: target}}},
	}
}

func slice(ip string, port int32) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc-x1"},
		Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.9"}}, {Addresses: []string{ip}}},
		Ports:      []discoveryv1.EndpointPort{{Port: new(int32(80))}, {Port: &port}},
	}
}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		name, addr, want, err string
		svc                   *corev1.Service
	}{
		{name: "service port to its target port", addr: "10.96.0.10:443", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), want: "127.0.0.1:9443"},
		{name: "no target port: the port", addr: "10.96.0.10:443", svc: service("10.96.0.10", 443, intstr.IntOrString{}), want: "127.0.0.1:443"},
		{name: "another IP goes direct", addr: "10.0.0.7:10250", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), want: "10.0.0.7:10250"},
		{name: "headless service never matches", addr: "None:443", svc: service(corev1.ClusterIPNone, 443, intstr.FromInt32(9443)), want: "None:443"},
		{name: "port the service lacks", addr: "10.96.0.10:80", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), err: "has no port 80"},
		{name: "named target port", addr: "10.96.0.10:443", svc: service("10.96.0.10", 443, intstr.FromString("https")), err: `numeric target ports only, not "https"`},
		{name: "no port", addr: "10.96.0.10", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), err: "missing port"},
		{name: "an endpoint goes to its port", addr: "10.244.0.7:8080", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), want: "127.0.0.1:8080"},
		{name: "an endpoint's IP on a port its slice lacks goes direct", addr: "10.244.0.7:9090", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), want: "10.244.0.7:9090"},
		{name: "a port of the slice at another IP goes direct", addr: "10.244.0.8:8080", svc: service("10.96.0.10", 443, intstr.FromInt32(9443)), want: "10.244.0.8:8080"},
		{name: "an endpoint at a Service's cluster IP (KWOK)", addr: "10.244.0.7:8080", svc: service("10.244.0.7", 443, intstr.FromInt32(9443)), want: "127.0.0.1:8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Proxy{Services: func() []*corev1.Service { return []*corev1.Service{tc.svc} },
				Endpoints: func() []*discoveryv1.EndpointSlice { return []*discoveryv1.EndpointSlice{slice("10.244.0.7", 8080)} }}
			got, err := p.Route(tc.addr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Route(%q) = %q, %v; want an error with %q", tc.addr, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Route(%q) = %q, %v; want %q", tc.addr, got, err, tc.want)
			}
		})
	}
}

// TestTunnel speaks to the proxy as the API server does: CONNECT over a
// unix socket, then bytes both ways with a "pod" on loopback.
func TestTunnel(t *testing.T) {
	pod, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pod.Close() }()
	go func() {
		for {
			c, err := pod.Accept()
			if err != nil {
				return
			}
			go func() { defer func() { _ = c.Close() }(); _, _ = io.Copy(c, c) }()
		}
	}()
	podPort := int32(pod.Addr().(*net.TCPAddr).Port)
	p := &Proxy{Services: func() []*corev1.Service {
		return []*corev1.Service{service("10.96.0.10", 443, intstr.FromInt32(podPort))}
	}}
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	for _, tc := range []struct {
		target string
		status int
	}{{"10.96.0.10:443", 200}, {"10.96.0.10:80", http.StatusBadGateway}} {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", tc.target)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != tc.status {
			t.Fatalf("CONNECT %s: %s, want %d", tc.target, res.Status, tc.status)
		}
		if tc.status == 200 {
			if _, err := io.WriteString(conn, "ping\n"); err != nil {
				t.Fatal(err)
			}
			line, err := br.ReadString('\n')
			if err != nil || line != "ping\n" {
				t.Fatalf("through the tunnel: %q, %v; want the echo", line, err)
			}
		}
		_ = conn.Close()
	}
}
