package source

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// trashPrefix starts the names of trees being removed.
const trashPrefix = ".rm-"

// staleTemporary is the age past which a temporary or half-removed tree
// found on disk is a leftover of a process that died, not another
// process's work in progress.
const staleTemporary = time.Hour

// checkouts tracks the trees on disk (trees/<sha> of every repository):
// which ones readers hold, their sizes and recency. When the cache holds
// more trees or bytes than its bounds, the least recently used trees no
// reader holds are removed; a later Acquire writes them again.
type checkouts struct {
	cacheDir string
	maxTrees int
	maxBytes int64

	scan sync.Once // trees left by earlier processes are tracked on first use

	mu    sync.Mutex
	byDir map[string]*list.Element
	lru   *list.List // of *checkout; front = most recently used
	bytes int64
}

type checkout struct {
	dir   string
	size  int64
	holds int
}

func newCheckouts(cacheDir string, opts Options) *checkouts {
	c := &checkouts{cacheDir: cacheDir, maxTrees: opts.MaxCachedCheckouts, maxBytes: opts.MaxCachedCheckoutBytes,
		byDir: map[string]*list.Element{}, lru: list.New()}
	if c.maxTrees <= 0 {
		c.maxTrees = DefaultMaxCachedCheckouts
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxCachedCheckoutBytes
	}
	return c
}

// hold holds the tree at dir if it is tracked.
func (c *checkouts) hold(dir string) (string, func(), bool) {
	c.scan.Do(c.load)
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byDir[dir]
	if !ok {
		return "", nil, false
	}
	el.Value.(*checkout).holds++
	c.lru.MoveToFront(el)
	return dir, c.releaser(el), true
}

// add tracks and holds the tree just found or written at dir (size -1:
// not known). It reports false if the tree is gone already (another
// caller's eviction removed it since): the caller writes it again.
func (c *checkouts) add(dir string, size int64) (func(), bool) {
	c.scan.Do(c.load)
	if size < 0 {
		size = treeSize(dir)
	}
	c.mu.Lock()
	el, ok := c.byDir[dir]
	if !ok {
		// Evictions rename trees away under mu: this answer holds until unlock.
		if !isDir(dir) {
			c.mu.Unlock()
			return nil, false
		}
		el = c.lru.PushFront(&checkout{dir: dir, size: size})
		c.byDir[dir] = el
		c.bytes += size
	}
	el.Value.(*checkout).holds++
	c.lru.MoveToFront(el)
	trash := c.evictLocked()
	c.mu.Unlock()
	removeTrees(trash)
	return c.releaser(el), true
}

func (c *checkouts) releaser(el *list.Element) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			el.Value.(*checkout).holds--
			trash := c.evictLocked()
			c.mu.Unlock()
			removeTrees(trash)
		})
	}
}

// evictLocked untracks the least recently used trees that nobody holds
// while the cache is over its bounds, renaming each out of its place (a
// concurrent checkout then writes a fresh one instead of finding it half
// removed). It returns the renamed directories, to remove unlocked.
func (c *checkouts) evictLocked() []string {
	var trash []string
	for el := c.lru.Back(); el != nil && (c.lru.Len() > c.maxTrees || c.bytes > c.maxBytes); {
		prev := el.Prev()
		if e := el.Value.(*checkout); e.holds == 0 {
			moved := filepath.Join(filepath.Dir(e.dir), trashPrefix+filepath.Base(e.dir)+"-"+randomSuffix())
			err := os.Rename(e.dir, moved)
			if err == nil {
				trash = append(trash, moved)
			}
			if err == nil || os.IsNotExist(err) {
				c.lru.Remove(el)
				delete(c.byDir, e.dir)
				c.bytes -= e.size
			}
		}
		el = prev
	}
	return trash
}

// load tracks the trees earlier processes left, oldest first, and removes
// their stale temporary and half-removed trees; it then evicts down to the
// bounds.
func (c *checkouts) load() {
	type found struct {
		dir  string
		size int64
		mod  time.Time
	}
	var trees []found
	dirs, _ := filepath.Glob(filepath.Join(c.cacheDir, "*", "trees", "*"))
	for _, dir := range dirs {
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			continue
		}
		name := filepath.Base(dir)
		if strings.HasPrefix(name, tmpTreePrefix) || strings.HasPrefix(name, trashPrefix) {
			if time.Since(info.ModTime()) > staleTemporary {
				_ = os.RemoveAll(dir)
			}
			continue
		}
		if len(name) == 40 && isHex(name) {
			trees = append(trees, found{dir: dir, size: treeSize(dir), mod: info.ModTime()})
		}
	}
	sort.Slice(trees, func(i, j int) bool { return trees[i].mod.After(trees[j].mod) })
	c.mu.Lock()
	for _, t := range trees {
		c.byDir[t.dir] = c.lru.PushBack(&checkout{dir: t.dir, size: t.size})
		c.bytes += t.size
	}
	trash := c.evictLocked()
	c.mu.Unlock()
	removeTrees(trash)
}

// stats returns the number of trees tracked and their bytes.
func (c *checkouts) stats() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// treeSize sums the sizes of the regular files under dir.
func treeSize(dir string) int64 {
	var size int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return size
}

func removeTrees(dirs []string) {
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
