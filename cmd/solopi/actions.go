package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/casefile"
	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/outcome"
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

func actionsCommand(exit *int, e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:      "actions",
		Usage:     "list the case-step actions (66 enum, 6 provider; solopi-ai's catalogue) and the 7 typed Agent actions (local, no device)",
		UsageText: "solopi actions",
		Action: cmdutil.Action(exit, e, func(ctx context.Context, g *cmdutil.Globals, c *cli.Context) (outcome.Result, error) {
			cat, acts := casefile.AuthoringCatalog(), protocol.TypedActions()
			return outcome.OK(actionsResult{
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
