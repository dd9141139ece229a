package benchkit

import (
	"os"
	"strings"
)

// Tail is the last n lines of the file at path, each cut at 400 bytes.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = Truncate(lines[i], 400)
	}
	return strings.Join(lines, "\n")
}

// Truncate cuts s at n bytes.
func Truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
