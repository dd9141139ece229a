package main

import (
	"bufio"
	"os"
	"strings"

	"github.com/skiffcd/skiff/bench/internal/benchkit"
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
			lines = append(lines, benchkit.Truncate(l, 400))
			if len(lines) > 8 {
				lines = lines[1:]
			}
		}
	}
	return count, lines
}
