package v1alpha1

import (
	"encoding/json"
	"sort"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// UnmarshalJSON reads a status as the API server stores it. The CRD does
// not type the status, so anyone allowed to write an Application can store
// a status field of the wrong type; a decode error there would fail the
// whole Application, and with it every list and watch of Applications. A
// top-level field that does not decode is left out instead, and named by
// Unreadable, so that the controller can rewrite it.
func (s *ApplicationStatus) UnmarshalJSON(data []byte) error {
	type plain ApplicationStatus // without this method
	var whole plain
	err := decode(data, &whole)
	if err == nil {
		*s = ApplicationStatus(whole)
		return nil
	}
	reason := err.Error()
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		*s = ApplicationStatus{unreadable: []string{"status"}, unreadableReason: reason}
		return nil
	}
	readable := make(map[string]json.RawMessage, len(fields))
	var unreadable []string
	for name, value := range fields {
		one, _ := json.Marshal(map[string]json.RawMessage{name: value})
		var probe plain
		if utiljson.Unmarshal(one, &probe) != nil {
			unreadable = append(unreadable, name)
			continue
		}
		readable[name] = value
	}
	sort.Strings(unreadable)
	rest, _ := json.Marshal(readable)
	var kept plain
	if utiljson.Unmarshal(rest, &kept) != nil {
		kept = plain{}
	}
	*s = ApplicationStatus(kept)
	s.unreadable, s.unreadableReason = unreadable, reason
	return nil
}

// Unreadable names the status fields that were of the wrong type when the
// status was read (so left out of it), and the decode error; none for a
// status read whole. "status" stands for a status that is not an object.
func (s *ApplicationStatus) Unreadable() (fields []string, reason string) {
	return s.unreadable, s.unreadableReason
}
