package render

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// kustomize reads a resource given by URL whole, with an http.Client of its
// own that cannot be passed in (api/internal/loader: httpClientGetContent)
// and that sends its requests through http.DefaultTransport: the one place
// left to bound what one fetch reads. capFetches wraps it, once, the first
// time a kustomization may fetch (--allow-remote); fargatekit makes no
// other request through it (client-go and the AWS SDK have transports of
// their own). Bases fetched with git are bounded by --render-timeout only.

// fetchLimit is the most bytes one response body may have: the render's
// output cap, as set by the last render that allowed remote resources.
var fetchLimit atomic.Int64

var capOnce sync.Once

// capFetches bounds each response body read through http.DefaultTransport
// to limit bytes from now on.
func capFetches(limit int64) {
	fetchLimit.Store(limit)
	capOnce.Do(func() { http.DefaultTransport = cappedTransport{base: http.DefaultTransport} })
}

// cappedTransport is a RoundTripper whose response bodies fail past
// fetchLimit bytes, with an error naming the URL.
type cappedTransport struct{ base http.RoundTripper }

func (t cappedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	limit := fetchLimit.Load()
	resp.Body = &cappedBody{ReadCloser: resp.Body, url: r.URL.Redacted(), limit: limit, left: limit}
	return resp, nil
}

// cappedBody reads a response body up to limit bytes, and fails after.
type cappedBody struct {
	io.ReadCloser
	url         string
	limit, left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("fetching %s: more than %d bytes", b.url, b.limit)
	}
	if int64(len(p)) > b.left+1 { // one byte more tells a body of exactly limit from a longer one
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("fetching %s: more than %d bytes", b.url, b.limit)
	}
	return n, err
}
