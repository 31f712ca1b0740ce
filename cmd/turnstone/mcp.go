package main

import "github.com/spf13/cobra"

func newMCPCmd(f *flags) *cobra.Command {
	_ = f
	return &cobra.Command{Use: "mcp", Short: "MCP servers", Hidden: true}
}
