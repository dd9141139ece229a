package appcli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// WriteObject prints v as "json" or "yaml".
func WriteObject(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("printing JSON: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("printing YAML: %w", err)
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("unknown output format %q", format)
}

// Confirm asks question on w and reads a yes or no answer from r.
func Confirm(r io.Reader, w io.Writer, question string) (bool, error) {
	in := bufio.NewScanner(r)
	for {
		fmt.Fprintf(w, "%s [y/n] ", question)
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return false, fmt.Errorf("reading the answer: %w", err)
			}
			return false, nil
		}
		switch strings.ToLower(strings.TrimSpace(in.Text())) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
	}
}

// ExitError makes skiff exit with Code without printing an error, as
// `diff` does when it finds differences.
type ExitError struct {
	Code   int
	Reason string
}

func (e *ExitError) Error() string { return e.Reason }
