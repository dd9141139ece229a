package reposerver

import (
	"context"
	"sync"
)

// keyedLocks is a mutex per key, taken under a context; keys nobody holds
// or waits for take no memory.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	ch    chan struct{} // holds a value while locked
	users int           // holders and waiters
}

func newKeyedLocks() *keyedLocks {
	return &keyedLocks{locks: map[string]*keyedLock{}}
}

// lock takes key's lock, or returns ctx's error if ctx ends first. The
// returned function unlocks it.
func (k *keyedLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	l, ok := k.locks[key]
	if !ok {
		l = &keyedLock{ch: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
		return func() {
			<-l.ch
			k.leave(key, l)
		}, nil
	case <-ctx.Done():
		k.leave(key, l)
		return nil, ctx.Err()
	}
}

func (k *keyedLocks) leave(key string, l *keyedLock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l.users--; l.users == 0 {
		delete(k.locks, key)
	}
}
