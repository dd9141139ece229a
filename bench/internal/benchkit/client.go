package benchkit

import (
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skiffcd/skiff/internal/kubeclient"
)

// NewClient is a client of the control plane at cfg with skiff's scheme
// and room for the benchmarks' bursts.
func NewClient(cfg *rest.Config) (client.WithWatch, error) {
	scheme, err := kubeclient.NewScheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

// ForEach runs fn(0..n-1) with inFlight calls at a time and returns the
// first error.
func ForEach(n, inFlight int, fn func(i int) error) error {
	work := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return firstErr
}
