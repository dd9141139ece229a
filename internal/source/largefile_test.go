package source

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoWithFile commits one file of size bytes (YAML-like lines, so the
// pack stays small) with the git command line, which is much faster than
// go-git at hashing hundreds of megabytes, and returns the repository's URL.
func repoWithFile(t *testing.T, name string, size int64) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := "key: value-0123456789-abcdefghijklmnopqrstuvwxyz-0123456789\n"
	for written := int64(0); written < size; written += int64(len(line)) {
		if _, err := w.WriteString(line[:min(int64(len(line)), size-written)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "big file")
	return "file://" + dir
}

// allocated is the heap the process has allocated so far, in total: a blob
// read whole shows in it whatever the collector did since.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A checkout streams blobs to their files: a file of hundreds of megabytes
// never sits in the heap, and one over the size limit is refused from its
// header, with an error naming it relative to the repository root.
func TestCheckoutOfLargeFilesUsesBoundedMemory(t *testing.T) {
	tests := map[string]struct {
		size    int64
		wantErr string
	}{
		"a 64 MB file is written without being held in memory": {
			size: 64 << 20,
		},
		"a 200 MB file is refused without being read": {
			size:    200 << 20,
			wantErr: "data/big.yaml: file of 209715200 bytes is larger than the limit of 104857600 bytes",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			url := repoWithFile(t, "data/big.yaml", tc.size)
			cacheDir := t.TempDir()
			c := NewCache(cacheDir, Options{})
			sha, err := c.Resolve(ctx, url, Credentials{}, "main")
			if err != nil {
				t.Fatal(err)
			}

			runtime.GC()
			before := allocated()
			dir, err := c.Checkout(ctx, url, sha)
			grew := allocated() - before
			t.Logf("checkout allocated %d KiB", grew>>10)
			if grew > 16<<20 {
				t.Errorf("checkout of a %d MiB file allocated %d MiB, want under 16 MiB", tc.size>>20, grew>>20)
			}

			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Checkout() error = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), cacheDir) {
					t.Errorf("Checkout() error %q names the cache directory", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(filepath.Join(dir, "data", "big.yaml"))
			if err != nil || info.Size() != tc.size {
				t.Fatalf("checked out file: %v, %v; want %d bytes", info, err, tc.size)
			}
		})
	}
}
