package notify

// The built-in catalog: the trigger names and conditions of Argo CD's
// notifications catalog, with Skiff's own templates. A ConfigMap entry of
// the same name replaces a built-in one.

const operationPhaseIn = "app.status.operationState != nil and app.status.operationState.phase in "

// perOperation makes the sync triggers send once per operation even when
// the controller never observes the operation running (a fast sync between
// two observations), which Argo CD's catalog, without oncePer, misses.
const perOperation = "app.status.operationState.startedAt"

func catalogTriggers() map[string]Trigger {
	triggers := map[string][]Condition{
		"on-created": {{When: "true", OncePer: "app.metadata.name", Send: []string{"app-created"}}},
		"on-deleted": {{When: "app.metadata.deletionTimestamp != nil", OncePer: "app.metadata.name", Send: []string{"app-deleted"}}},
		"on-deployed": {{
			When:    operationPhaseIn + "['Succeeded'] and app.status.health.status == 'Healthy'",
			OncePer: "app.status.operationState?.syncResult?.revision",
			Send:    []string{"app-deployed"},
		}},
		"on-health-degraded":     {{When: "app.status.health.status == 'Degraded'", Send: []string{"app-health-degraded"}}},
		"on-sync-failed":         {{When: operationPhaseIn + "['Error', 'Failed']", OncePer: perOperation, Send: []string{"app-sync-failed"}}},
		"on-sync-running":        {{When: operationPhaseIn + "['Running']", OncePer: perOperation, Send: []string{"app-sync-running"}}},
		"on-sync-status-unknown": {{When: "app.status.sync.status == 'Unknown'", Send: []string{"app-sync-status-unknown"}}},
		"on-sync-succeeded":      {{When: operationPhaseIn + "['Succeeded']", OncePer: perOperation, Send: []string{"app-sync-succeeded"}}},
	}
	out := make(map[string]Trigger, len(triggers))
	for name, conds := range triggers {
		out[name] = Trigger{Name: name, Conditions: conds}
	}
	return out
}

// appLink is the app's page when the context names Argo CD's URL.
const appLink = "{{if .context.argocdUrl}}\nDetails: {{.context.argocdUrl}}/applications/{{.app.metadata.name}}{{end}}"

func catalogTemplate(name, title, message, color string) Template {
	return Template{
		Name:    name,
		Title:   title,
		Message: message + appLink,
		Email:   &EmailTemplate{Subject: title},
		Slack: &SlackTemplate{Attachments: `[{"title": "{{.app.metadata.name}}", "color": "` + color + `",
 "fields": [{"title": "Sync Status", "value": "{{.app.status.sync.status}}", "short": true},
            {"title": "Health", "value": "{{.app.status.health.status}}", "short": true},
            {"title": "Revision", "value": "{{.app.status.sync.revision}}", "short": false}]}]`},
	}
}

func catalogTemplates() map[string]Template {
	list := []Template{
		catalogTemplate("app-created", "Application {{.app.metadata.name}} created",
			"Application {{.app.metadata.name}} has been created.", "#18be52"),
		catalogTemplate("app-deleted", "Application {{.app.metadata.name}} deleted",
			"Application {{.app.metadata.name}} has been deleted.", "#f4c030"),
		catalogTemplate("app-deployed", "Application {{.app.metadata.name}} deployed",
			"Application {{.app.metadata.name}} is now running revision {{.app.status.sync.revision}}.", "#18be52"),
		catalogTemplate("app-health-degraded", "Application {{.app.metadata.name}} is degraded",
			"Application {{.app.metadata.name}} has degraded health: {{.app.status.health.message}}", "#f4c030"),
		catalogTemplate("app-sync-failed", "Sync of application {{.app.metadata.name}} failed",
			"Sync of application {{.app.metadata.name}} failed at {{.app.status.operationState.finishedAt}}: {{.app.status.operationState.message}}", "#e96d76"),
		catalogTemplate("app-sync-running", "Application {{.app.metadata.name}} is syncing",
			"Sync of application {{.app.metadata.name}} started at {{.app.status.operationState.startedAt}}.", "#0dadea"),
		catalogTemplate("app-sync-status-unknown", "Application {{.app.metadata.name}} sync status is unknown",
			"Sync status of application {{.app.metadata.name}} is Unknown.", "#e96d76"),
		catalogTemplate("app-sync-succeeded", "Application {{.app.metadata.name}} synced",
			"Application {{.app.metadata.name}} was synced at {{.app.status.operationState.finishedAt}}, revision {{.app.status.sync.revision}}.", "#18be52"),
	}
	out := make(map[string]Template, len(list))
	for _, t := range list {
		out[t.Name] = t
	}
	return out
}
