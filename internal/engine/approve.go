package engine

import (
	"context"
)

// approve runs phase 2: one question for the whole batch, asked only when
// some call needs a person. It returns feedback to append as a user message
// after the results (approval with a message); denial feedback goes into
// each denied call's result instead, so the model always sees it.
func (s *Session) approve(ctx context.Context, items []*item) (feedback string) {
	var pending []ApprovalItem
	for _, it := range items {
		if it.needsApproval {
			pending = append(pending, ApprovalItem{
				CallID:  it.call.ID,
				Name:    it.call.Name,
				Label:   it.prepared.ApprovalLabel,
				Header:  it.prepared.Header,
				Preview: it.prepared.Preview,
			})
		}
	}
	if len(pending) == 0 {
		return ""
	}
	s.state(StateAttention)
	d := s.ui.ApproveTools(ctx, pending)
	if ctx.Err() != nil {
		d = Decision{Approved: false}
	}
	s.state(StateRunning)
	if d.Approved {
		if d.Always {
			s.mu.Lock()
			for _, p := range pending {
				s.always[p.Name] = true
			}
			s.mu.Unlock()
		}
		return d.Feedback
	}
	text := "Denied by user"
	switch {
	case ctx.Err() != nil:
		text = "Interrupted by user before the call ran"
	case d.Feedback != "":
		text = "Denied by user: " + d.Feedback
	}
	for _, it := range items {
		if it.needsApproval {
			it.denial = text
		}
	}
	return ""
}
