package appcli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

const none = "<none>"

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// WriteList prints apps as `argocd app list` does; wide adds the synced
// revision.
func WriteList(w io.Writer, apps []v1alpha1.Application, wide bool) error {
	tw := newTable(w)
	header := "NAME\tCLUSTER\tNAMESPACE\tPROJECT\tSTATUS\tHEALTH\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET"
	if wide {
		header += "\tREVISION"
	}
	fmt.Fprintln(tw, header)
	for i := range apps {
		app := &apps[i]
		src := primarySource(app)
		row := []string{
			app.Name, cluster(app), app.Spec.Destination.Namespace, project(app),
			string(app.Status.Sync.Status), string(app.Status.Health.Status), SyncPolicy(app),
			conditionSummary(app.Status.Conditions), src.RepoURL, src.Path, src.TargetRevision,
		}
		if wide {
			row = append(row, ShortRevision(syncedRevision(app)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// WriteApp prints app as `argocd app get` does: its summary, conditions,
// the last operation and the resource table.
func WriteApp(w io.Writer, app *v1alpha1.Application) error {
	tw := newTable(w)
	src := primarySource(app)
	field := func(name, value string) { fmt.Fprintf(tw, "%s:\t%s\n", name, value) }
	field("Name", app.Namespace+"/"+app.Name)
	field("Project", project(app))
	field("Server", cluster(app))
	field("Namespace", app.Spec.Destination.Namespace)
	if len(app.Spec.Sources) > 0 {
		for i, s := range app.Spec.Sources {
			field(fmt.Sprintf("Source %d", i+1), fmt.Sprintf("%s %s %s", s.RepoURL, firstOf(s.Path, s.Chart), firstOf(s.TargetRevision, "HEAD")))
		}
	} else {
		field("Repo", src.RepoURL)
		field("Target", src.TargetRevision)
		if src.Chart != "" {
			field("Chart", src.Chart)
		} else {
			field("Path", src.Path)
		}
	}
	field("Sync Policy", SyncPolicy(app))
	field("Sync Status", syncStatusLine(app))
	health := string(app.Status.Health.Status)
	if app.Status.Health.Message != "" {
		health += " (" + app.Status.Health.Message + ")"
	}
	field("Health Status", health)
	if s := app.Status.OperationState; s != nil {
		fmt.Fprintln(tw)
		field("Operation", "Sync")
		if s.SyncResult != nil {
			field("Sync Revision", firstOf(s.SyncResult.Revision, strings.Join(s.SyncResult.Revisions, ",")))
		}
		field("Phase", string(s.Phase))
		field("Start", s.StartedAt.Format(time.RFC3339))
		if s.FinishedAt != nil {
			field("Finished", s.FinishedAt.Format(time.RFC3339))
			field("Duration", s.FinishedAt.Sub(s.StartedAt.Time).String())
		}
		field("Message", s.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(app.Status.Conditions) > 0 {
		fmt.Fprintln(w)
		tw = newTable(w)
		fmt.Fprintln(tw, "CONDITION\tMESSAGE\tLAST TRANSITION")
		for _, c := range app.Status.Conditions {
			at := ""
			if c.LastTransitionTime != nil {
				at = c.LastTransitionTime.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Type, c.Message, at)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	rows := ResourceRows(app)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return WriteResources(w, rows)
}

// ResourceRow is one line of the resource table.
type ResourceRow struct {
	Group, Kind, Namespace, Name string
	// Status is the sync status, or the result of the last operation for
	// objects the comparison does not list (hooks, pruned objects).
	Status  string
	Health  string
	Hook    string
	Message string
}

func (r ResourceRow) key() string {
	return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name
}

// ResourceRows merges the compared resources with the results of the last
// operation: the message comes from the operation, and hooks and pruned
// objects appear with their result.
func ResourceRows(app *v1alpha1.Application) []ResourceRow {
	var rows []ResourceRow
	index := map[string]int{}
	for _, rs := range app.Status.Resources {
		row := ResourceRow{Group: rs.Group, Kind: rs.Kind, Namespace: rs.Namespace, Name: rs.Name, Status: string(rs.Status)}
		if rs.Health != nil {
			row.Health = string(rs.Health.Status)
		}
		if rs.RequiresPruning {
			row.Message = "ignored (requires pruning)"
		}
		index[row.key()] = len(rows)
		rows = append(rows, row)
	}
	if s := app.Status.OperationState; s != nil && s.SyncResult != nil {
		for _, res := range s.SyncResult.Resources {
			row := ResourceRow{Group: res.Group, Kind: res.Kind, Namespace: res.Namespace, Name: res.Name, Message: res.Message}
			if res.HookType != "" {
				row.Hook, row.Status = res.HookType, string(res.HookPhase)
				rows = append(rows, row)
				continue
			}
			if i, ok := index[row.key()]; ok {
				rows[i].Message = res.Message
				if res.Status == v1alpha1.ResultCodeSyncFailed || res.Status == v1alpha1.ResultCodePruneSkipped {
					rows[i].Status = string(res.Status)
				}
				continue
			}
			row.Status = string(res.Status)
			index[row.key()] = len(rows)
			rows = append(rows, row)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if (rows[i].Hook == "") != (rows[j].Hook == "") {
			return rows[i].Hook == ""
		}
		return rows[i].key() < rows[j].key()
	})
	return rows
}

// WriteResources prints the resource table of `argocd app get`.
func WriteResources(w io.Writer, rows []ResourceRow) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tHOOK\tMESSAGE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Group, r.Kind, r.Namespace, r.Name, r.Status, r.Health, r.Hook, oneLine(r.Message))
	}
	return tw.Flush()
}

// WriteHistory prints the deployment history of app, oldest first.
func WriteHistory(w io.Writer, app *v1alpha1.Application) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tDATE\tREVISION")
	for _, h := range app.Status.History {
		revision := h.Revision
		if len(h.Revisions) > 0 {
			revision = strings.Join(h.Revisions, ",")
		}
		src := h.Source
		if revision != "" && src.TargetRevision != "" && src.TargetRevision != revision {
			revision = fmt.Sprintf("%s (%s)", src.TargetRevision, revision)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", h.ID, h.DeployedAt.Format(time.RFC3339), revision)
	}
	return tw.Flush()
}

// SyncPolicy names app's sync policy as `argocd app list` does.
func SyncPolicy(app *v1alpha1.Application) string {
	if !app.IsAutomated() {
		return "Manual"
	}
	if app.Spec.SyncPolicy.Automated.Prune {
		return "Auto-Prune"
	}
	return "Auto"
}

// ShortRevision shortens a commit SHA to 7 characters; other revisions
// (chart versions, branch names) are kept.
func ShortRevision(rev string) string {
	if len(rev) == 40 && strings.Trim(rev, "0123456789abcdef") == "" {
		return rev[:7]
	}
	return rev
}

func syncStatusLine(app *v1alpha1.Application) string {
	status := string(app.Status.Sync.Status)
	if status == "" {
		return "Unknown"
	}
	target := firstOf(primarySource(app).TargetRevision, "HEAD")
	if len(app.Spec.Sources) > 0 {
		target = "multiple revisions"
	}
	line := status + " to " + target
	if rev := syncedRevision(app); rev != "" {
		line += " (" + ShortRevision(rev) + ")"
	}
	return line
}

func syncedRevision(app *v1alpha1.Application) string {
	if len(app.Status.Sync.Revisions) > 0 {
		short := make([]string, len(app.Status.Sync.Revisions))
		for i, r := range app.Status.Sync.Revisions {
			short[i] = ShortRevision(r)
		}
		return strings.Join(short, ",")
	}
	return app.Status.Sync.Revision
}

func conditionSummary(conds []v1alpha1.ApplicationCondition) string {
	if len(conds) == 0 {
		return none
	}
	counts := map[v1alpha1.ApplicationConditionType]int{}
	var order []v1alpha1.ApplicationConditionType
	for _, c := range conds {
		if counts[c.Type] == 0 {
			order = append(order, c.Type)
		}
		counts[c.Type]++
	}
	parts := make([]string, len(order))
	for i, t := range order {
		parts[i] = string(t)
		if counts[t] > 1 {
			parts[i] = fmt.Sprintf("%s(%d)", t, counts[t])
		}
	}
	return strings.Join(parts, ",")
}

func primarySource(app *v1alpha1.Application) v1alpha1.ApplicationSource {
	if app.Spec.Source != nil {
		return *app.Spec.Source
	}
	if len(app.Spec.Sources) > 0 {
		return app.Spec.Sources[0]
	}
	return v1alpha1.ApplicationSource{}
}

func cluster(app *v1alpha1.Application) string {
	return firstOf(app.Spec.Destination.Server, app.Spec.Destination.Name)
}

func project(app *v1alpha1.Application) string {
	return app.ProjectName()
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
