package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/protocol"
)

// actionsResult is solopi-ai's `actions` object (counts, enumActions,
// providerActions, every key kept) plus the typed Agent actions.
type actionsResult struct {
	Success         bool                          `json:"success"`
	Counts          actionCounts                  `json:"counts"`
	EnumActions     []casefile.ActionDescriptor   `json:"enumActions"`
	ProviderActions []casefile.ProviderDescriptor `json:"providerActions"`
	Protocol        string                        `json:"agentProtocolVersion"`
	AgentActions    []protocol.TypedAction        `json:"agentActions"`
}

// actionCounts keeps solopi-ai's totalDescriptors (the case-authoring
// descriptors only) and counts the Agent actions beside it.
type actionCounts struct {
	casefile.CatalogCounts
	AgentActions int `json:"agentActions"`
}

func newCmdActions(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "actions",
		Usage:     "list the case-step actions (66 enum, 6 provider; solopi-ai's catalogue) and the 7 typed Agent actions (local, no device)",
		UsageText: "solopi actions",
		Action: cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) {
			cat, acts := casefile.AuthoringCatalog(), protocol.TypedActions()
			return cmdutil.OK(actionsResult{
				Success:         true,
				Counts:          actionCounts{CatalogCounts: cat.Counts, AgentActions: len(acts)},
				EnumActions:     cat.EnumActions,
				ProviderActions: cat.ProviderActions,
				Protocol:        protocol.AgentProtocolVersion,
				AgentActions:    acts,
			}), nil
		}),
	}
}
