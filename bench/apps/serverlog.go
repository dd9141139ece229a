package main

import (
	"bufio"
	"os"
	"strings"
)

func scanLog(path string) (int, []string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	var lines []string
	count := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "ERROR") || strings.Contains(l, `"level":"error"`) || strings.Contains(l, "panic") {
			count++
			lines = append(lines, truncate(l, 400))
			if len(lines) > 8 {
				lines = lines[1:]
			}
		}
	}
	return count, lines
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i := range lines {
		lines[i] = truncate(lines[i], 400)
	}
	return strings.Join(lines, "\n")
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
