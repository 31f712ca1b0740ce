package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"turnstone/internal/engine"
	"turnstone/internal/tool"
	"turnstone/internal/ui/headless"
)

func runMain(cmd *cobra.Command, f *flags) error {
	s, err := resolve(cmd, f)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("prompt") {
		return runHeadless(cmd.Context(), s, f)
	}
	if cmd.Flags().Changed("output-format") {
		return errors.New("--output-format needs -p PROMPT (headless mode)")
	}
	return runREPL(cmd.Context(), s)
}

func (a *app) session(ui engine.UI, catalog tool.Catalog) (*engine.Session, error) {
	s := a.set
	return engine.New(engine.Options{
		Provider:        a.provider,
		Model:           s.model,
		Catalog:         catalog,
		UI:              ui,
		MaxTokens:       s.maxTokens,
		Temperature:     s.temperature,
		ReasoningEffort: s.effort,
		ContextWindow:   s.contextWindow,
		ToolTruncation:  s.toolTruncation,
		SkipPermissions: s.skipPermissions,
		Instructions:    s.instructions,
		Redact:          a.redactor.Redact,
	})
}

func runHeadless(parent context.Context, s *settings, f *flags) error {
	format, err := headless.ParseFormat(f.outputFormat)
	if err != nil {
		return err
	}
	prompt := f.prompt
	if prompt == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fmt.Errorf("read prompt from stdin: %w", err)
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return errors.New("empty prompt: pass -p \"...\" or -p - with the prompt on stdin")
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	a, err := openApp(ctx, s, true, true)
	if err != nil {
		return err
	}
	defer a.close()
	ui := headless.New(format, os.Stdout)
	catalog := a.catalog()
	sess, err := a.session(ui, catalog)
	if err != nil {
		return err
	}
	var names []string
	for _, d := range catalog.Definitions() {
		names = append(names, d.Name)
	}
	ui.Init(sess.ID(), sess.Model(), names)
	turn, err := sess.Send(ctx, prompt)
	if err != nil {
		ui.Fail(err)
		fmt.Fprintln(os.Stderr, "turnstone:", oneLine(err.Error()))
		return exitError{code: 1}
	}
	if err := ui.Finish(sess.ID(), turn); err != nil {
		fmt.Fprintln(os.Stderr, "turnstone:", err)
		return exitError{code: 1}
	}
	return nil
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
