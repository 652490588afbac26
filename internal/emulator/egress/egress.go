// Package egress lets the emulator's API server reach Services of the
// cluster, as an EKS control plane reaches pods through the cluster's
// network. KWOK runs no pod, so a Service's traffic from the API server
// (service webhooks, aggregated APIs, and the service proxy, which dials
// one of the Service's endpoints) goes to 127.0.0.1 on the Service's
// target port, where a process of the host stands in for its pods.
//
// The API server sends its cluster traffic through an HTTP CONNECT proxy on a
// unix socket (its egress selector, the mechanism of the Konnectivity
// service); Proxy is that proxy.
package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Config is the API server's EgressSelectorConfiguration (its flag
// --egress-selector-config-file): the cluster's traffic goes through the
// CONNECT proxy on socket; the control plane's (URL webhooks) goes direct.
func Config(socket string) string {
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, strconv.Quote(socket))
}

// Services lists the cluster's Services (an informer's cache).
type Services func() []*corev1.Service

// Endpoints lists the cluster's EndpointSlices (an informer's cache).
type Endpoints func() []*discoveryv1.EndpointSlice

// Proxy answers CONNECT host:port. A Service's cluster IP and port is
// dialled at 127.0.0.1 on its target port, and so is an endpoint of a
// Service (a pod's IP, on a port of its EndpointSlice: where `kubectl get
// --raw .../services/NAME:PORT/proxy/` goes); any other address as given.
type Proxy struct {
	Services Services
	// Endpoints is nil when only cluster IPs are routed (tests).
	Endpoints Endpoints
	// Dial is net.Dialer's DialContext unless set (tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Route is where a connection to addr goes.
func (p *Proxy) Route(addr string) (string, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("CONNECT %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", fmt.Errorf("CONNECT %q: the port is not a number", addr)
	}
	// Endpoints first, on their exact port: KWOK gives pods addresses of
	// the range of cluster IPs (the Service kubernetes is 10.0.0.1, and so
	// may be a pod).
	if p.Endpoints != nil {
		for _, slice := range p.Endpoints() {
			if hasEndpoint(slice, host, port) {
				return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
			}
		}
	}
	for _, svc := range p.Services() {
		if !hasIP(svc, host) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if int(sp.Port) != port {
				continue
			}
			switch sp.TargetPort.Type {
			case intstr.Int:
				if sp.TargetPort.IntVal != 0 {
					port = int(sp.TargetPort.IntVal)
				}
			case intstr.String:
				return "", fmt.Errorf("service %s/%s port %d: the emulator follows numeric target ports only, not %q", svc.Namespace, svc.Name, sp.Port, sp.TargetPort.StrVal)
			}
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
		}
		return "", fmt.Errorf("service %s/%s has no port %d", svc.Namespace, svc.Name, port)
	}
	return addr, nil
}

// hasEndpoint reports whether the slice has an endpoint at ip and a port
// numbered port.
func hasEndpoint(slice *discoveryv1.EndpointSlice, ip string, port int) bool {
	if !slices.ContainsFunc(slice.Ports, func(p discoveryv1.EndpointPort) bool { return p.Port != nil && int(*p.Port) == port }) {
		return false
	}
	return slices.ContainsFunc(slice.Endpoints, func(e discoveryv1.Endpoint) bool { return slices.Contains(e.Addresses, ip) })
}

func hasIP(svc *corev1.Service, ip string) bool {
	if svc.Spec.ClusterIP == ip {
		return ip != "" && ip != corev1.ClusterIPNone
	}
	for _, c := range svc.Spec.ClusterIPs {
		if c == ip {
			return true
		}
	}
	return false
}

// ServeHTTP tunnels a CONNECT.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT", http.StatusMethodNotAllowed)
		return
	}
	to, err := p.Route(r.Host)
	if err != nil {
		slog.Warn("the cluster network cannot route", "err", err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	dial := p.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	}
	upstream, err := dial(r.Context(), "tcp", to)
	if err != nil {
		slog.Warn("the cluster network cannot reach", "target", r.Host, "via", to, "err", err)
		http.Error(w, fmt.Sprintf("dialling %s for %s: %v", to, r.Host, err), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		_ = upstream.Close()
		return
	}
	pipe(conn, rw.Reader, upstream)
}

// pipe copies both ways until either side ends, starting with what the
// server had already read from the client.
func pipe(client net.Conn, buffered *bufio.Reader, upstream net.Conn) {
	var once sync.Once
	done := func() {
		once.Do(func() {
			_ = client.Close()
			_ = upstream.Close()
		})
	}
	go func() {
		defer done()
		_, _ = io.Copy(upstream, buffered)
	}()
	defer done()
	_, _ = io.Copy(client, upstream)
}
