// gms-server: a MySQL-8-speaking server built on dolthub's go-mysql-server (in-memory
// tables), for sizeup's test suite. Nobody here wrote its SQL engine or its protocol
// layer: that is the point. It listens on a unix socket and/or a loopback TCP port,
// optionally with TLS, creates the accounts it is told to, and prints one line
// "ready tcp=PORT socket=PATH" when it accepts connections.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/binlogreplication"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/sirupsen/logrus"
)

type users []string

func (u *users) String() string     { return strings.Join(*u, ",") }
func (u *users) Set(v string) error { *u = append(*u, v); return nil }

func main() {
	port := flag.Int("port", 0, "loopback TCP port (0: any free one)")
	socket := flag.String("socket", "", "unix socket path (none when empty)")
	cert := flag.String("tls-cert", "", "server certificate (PEM); TLS is offered when given")
	key := flag.String("tls-key", "", "server private key (PEM)")
	requireTLS := flag.Bool("require-tls", false, "refuse connections without TLS")
	localInfile := flag.Bool("local-infile", false, "set local_infile=1")
	var accounts users
	flag.Var(&accounts, "user", "NAME:PASSWORD:PLUGIN, an account with all privileges (repeatable)")
	var statements users
	flag.Var(&statements, "sql", "a statement run as root before serving, e.g. a narrower account (repeatable)")
	idleReplica := flag.Bool("idle-replica", false, "answer SHOW REPLICA STATUS with a row and no source, as Dolt does")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel)

	db := memory.NewDatabase("sbtest")
	db.BaseDatabase.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	engine := sqle.NewDefault(pro)
	if *idleReplica {
		engine.Analyzer.Catalog.BinlogReplicaController = noSource{}
	}

	session := memory.NewSession(sql.NewBaseSessionWithClientServer("", sql.Client{User: "root", Address: "localhost"}, 0), pro)
	ctx := sql.NewContext(context.Background(), sql.WithSession(session))
	mysqlDb := engine.Analyzer.Catalog.MySQLDb
	mysqlDb.SetEnabled(true)
	mysqlDb.SetPersister(&mysql_db.NoopPersister{})
	mysqlDb.AddRootAccount()
	for _, a := range accounts {
		parts := strings.SplitN(a, ":", 3)
		if len(parts) != 3 {
			fail("-user %q: expected NAME:PASSWORD:PLUGIN", a)
		}
		for _, q := range []string{
			fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED WITH %s BY '%s'", parts[0], parts[2], parts[1]),
			fmt.Sprintf("GRANT ALL ON *.* TO '%s'@'%%' WITH GRANT OPTION", parts[0]),
		} {
			run(ctx, engine, q)
		}
	}
	for _, q := range statements {
		run(ctx, engine, q)
	}
	if *localInfile {
		run(ctx, engine, "SET GLOBAL local_infile = 1")
	}

	cfg := server.Config{Protocol: "tcp", Address: fmt.Sprintf("127.0.0.1:%d", *port), Socket: *socket}
	if *cert != "" {
		pair, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			fail("TLS key pair: %v", err)
		}
		cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}}
		cfg.RequireSecureTransport = *requireTLS
	}
	// One listener, bound here: the port it got is the one printed (no probe and rebind
	// for a parallel test to take in between).
	l, err := server.NewListener("tcp", cfg.Address, *socket)
	if err != nil {
		fail("listen: %v", err)
	}
	cfg.Listener = l
	cfg.Address = l.Addr().String()
	s, err := server.NewServer(cfg, engine, sql.NewContext, memory.NewSessionBuilder(pro), nil)
	if err != nil {
		fail("server: %v", err)
	}
	_, p, _ := net.SplitHostPort(cfg.Address)
	fmt.Printf("ready tcp=%s socket=%s\n", p, *socket)
	if err := s.Start(); err != nil {
		fail("serve: %v", err)
	}
}

func run(ctx *sql.Context, engine *sqle.Engine, q string) {
	_, iter, _, err := engine.Query(ctx, q)
	if err == nil {
		_, err = sql.RowIterToRows(ctx, iter)
	}
	if err != nil {
		fail("%s: %v", q, err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gms-server: "+format+"\n", args...)
	os.Exit(1)
}

// noSource is a replica controller with no source configured: go-mysql-server's
// SHOW REPLICA STATUS then answers one idle row with an empty Source_Host, as Dolt
// does on a server that replicates from nothing.
type noSource struct{}

func (noSource) StartReplica(*sql.Context) error {
	return fmt.Errorf("no replication source is configured")
}
func (noSource) StopReplica(*sql.Context) error { return nil }
func (noSource) SetReplicationSourceOptions(*sql.Context, []binlogreplication.ReplicationOption) error {
	return fmt.Errorf("not supported")
}
func (noSource) SetReplicationFilterOptions(*sql.Context, []binlogreplication.ReplicationOption) error {
	return fmt.Errorf("not supported")
}
func (noSource) GetReplicaStatus(*sql.Context) (*binlogreplication.ReplicaStatus, error) {
	return &binlogreplication.ReplicaStatus{ReplicaIoRunning: "No", ReplicaSqlRunning: "No"}, nil
}
func (noSource) ResetReplica(*sql.Context, bool) error { return nil }
