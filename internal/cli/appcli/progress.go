package appcli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
	"github.com/skiffcd/skiff/internal/appops"
)

// Progress shows an operation as it runs. On a terminal it redraws the
// resource table in place; elsewhere it prints one line per resource
// whose status, health or message changed.
type Progress struct {
	Out io.Writer
	// TTY redraws in place.
	TTY bool
	// Now stamps lines; nil means time.Now.
	Now func() time.Time

	seen  map[string]ResourceRow
	phase string
	drawn int // lines of the last redraw
}

// Update shows the state of app.
func (p *Progress) Update(app *v1alpha1.Application) {
	rows := ResourceRows(app)
	phase, message := "", ""
	if s := app.Status.OperationState; s != nil {
		phase, message = string(s.Phase), s.Message
	}
	if p.TTY {
		p.redraw(rows, phase, message)
		return
	}
	if p.seen == nil {
		p.seen = map[string]ResourceRow{}
	}
	stamp := p.now().Format(time.RFC3339)
	for _, r := range rows {
		if old, ok := p.seen[r.key()+r.Hook]; ok && old == r {
			continue
		}
		p.seen[r.key()+r.Hook] = r
		fmt.Fprintf(p.Out, "%s  %s  %s  %s  %s  %s%s\n", stamp, groupKind(r.Group, r.Kind),
			appops.QualifiedName(r.Namespace, r.Name), dash(r.Status), dash(r.Health), hookSuffix(r.Hook), padded(r.Message))
	}
	if phase != "" && phase+message != p.phase {
		p.phase = phase + message
		fmt.Fprintf(p.Out, "%s  operation %s%s\n", stamp, phase, messageSuffix(message))
	}
}

// redraw moves the cursor back over the last drawing and prints the table.
func (p *Progress) redraw(rows []ResourceRow, phase, message string) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "Phase: %s  %s\n\n", dash(phase), oneLine(message))
	_ = WriteResources(&buf, rows)
	if p.drawn > 0 {
		fmt.Fprintf(p.Out, "\x1b[%dA", p.drawn)
	}
	fmt.Fprint(p.Out, "\x1b[J", buf.String())
	p.drawn = strings.Count(buf.String(), "\n")
}

func (p *Progress) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func hookSuffix(hook string) string {
	if hook == "" {
		return ""
	}
	return "  hook " + hook
}

func messageSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + oneLine(msg)
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// Finish erases the table drawn on a terminal, so the final state can be
// printed in its place.
func (p *Progress) Finish() {
	if p.TTY && p.drawn > 0 {
		fmt.Fprintf(p.Out, "\x1b[%dA\x1b[J", p.drawn)
		p.drawn = 0
	}
}

func padded(msg string) string {
	if msg == "" {
		return ""
	}
	return "  " + oneLine(msg)
}
