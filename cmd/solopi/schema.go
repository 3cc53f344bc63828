package main

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/solopi-dev/solopi/cmd/solopi/internal/cmdutil"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/schemas"
)

// inputSchemas are the schemas of files a user writes (the rest are of
// command outputs, named after their command).
var inputSchemas = []string{"case", "requirement"}

type schemaList struct {
	Success bool     `json:"success"`
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
}

// newCmdSchema is `solopi schema [NAME]`: the JSON Schema of an input file
// or of a command's output, for editors and CI checks.
func newCmdSchema(e cmdutil.Env) *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print the JSON Schema of an input file (case, requirement) or of a command's output; list them without NAME (local)",
		UsageText: "solopi schema [NAME]\n\nExamples:\n  solopi schema requirement > requirement.schema.json   # point your editor at it\n" +
			"  solopi schema run                                      # what `solopi run` prints\n  solopi schema",
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			return cmdutil.Local(e, func(context.Context, *cmdutil.Globals) (cmdutil.Result, error) { return printSchema(name) })(c)
		},
	}
}

func printSchema(name string) (cmdutil.Result, error) {
	if name == "" {
		l := schemaList{Success: true, Inputs: inputSchemas}
		for _, n := range schemas.Names() {
			if !slices.Contains(inputSchemas, n) {
				l.Outputs = append(l.Outputs, n)
			}
		}
		return cmdutil.OK(l), nil
	}
	b, err := schemas.Raw(name)
	if err != nil {
		return cmdutil.Result{}, fault.Usage(fault.CodeUnknownSchema, "there is no schema of that name; `solopi schema` lists them").With("name", name)
	}
	return cmdutil.OK(json.RawMessage(b)), nil
}
