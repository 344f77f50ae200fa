"""Scale-out: turns as DBOS durable workflows on PostgreSQL (`turns`, `runner`)."""
