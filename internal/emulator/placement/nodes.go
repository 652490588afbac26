package placement

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// nodeStartTimeout is how long a pod waits for its node to be Ready before
// its placement is retried on a new node.
const nodeStartTimeout = 2 * time.Minute

// readyNodes follows the Fargate nodes and tells when one is Ready. A pod is
// bound to its node only then, as on EKS, where the pod is placed once its
// node runs; it also matters to KWOK 0.8, which runs the pods of a node
// only once it holds the node's lease, and skips for good a pod bound just
// before its lease cache saw the lease. A node KWOK made Ready is one whose
// lease it holds.
type readyNodes struct {
	mu    sync.Mutex
	ready map[string]chan struct{} // closed once the node is Ready
}

// watchNodes follows the Fargate nodes until ctx ends.
func watchNodes(ctx context.Context, client kubernetes.Interface) *readyNodes {
	r := &readyNodes{ready: map[string]chan struct{}{}}
	fargateNodes := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector = fargate.ComputeTypeLabel + "=fargate"
		return o
	}
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Nodes().List(ctx, fargateNodes(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Nodes().Watch(ctx, fargateNodes(o))
		},
	}, client)
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Node{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    r.seen,
			UpdateFunc: func(_, obj any) { r.seen(obj) },
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if n, ok := obj.(*corev1.Node); ok {
					r.mu.Lock()
					delete(r.ready, n.Name)
					r.mu.Unlock()
				}
			},
		},
	})
	go informer.Run(ctx.Done())
	return r
}

// seen records a node's state.
func (r *readyNodes) seen(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok || !nodeReady(n) {
		return
	}
	ch := r.channel(n.Name)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// channel is the channel closed once the node is Ready.
func (r *readyNodes) channel(name string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch, ok := r.ready[name]
	if !ok {
		ch = make(chan struct{})
		r.ready[name] = ch
	}
	return ch
}

// await waits until the node is Ready; at once when nodes are not followed.
func (r *readyNodes) await(ctx context.Context, name string) error {
	if r == nil {
		return nil
	}
	t := time.NewTimer(nodeStartTimeout)
	defer t.Stop()
	select {
	case <-r.channel(name):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("node %s is not Ready after %s", name, nodeStartTimeout)
	}
}

// nodeReady says whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
