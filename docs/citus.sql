-- Optional Citus layout for an iapguard PostgreSQL store (see docs/postgres.md, "Citus").
-- Run once, after the first `iapguard run` created the schema and before the tables grow:
--   psql "$URL" -v ON_ERROR_STOP=1 -c 'SET search_path TO iapguard' -f docs/citus.sql
-- Not verified here (Citus is not installable on the build machine): follow the manual check procedure.

CREATE EXTENSION IF NOT EXISTS citus;

-- Reference tables: small, replicated to every worker, joinable from any shard.
SELECT create_reference_table('ref_app');
SELECT create_reference_table('ref_product');
SELECT create_reference_table('ref_tester');
SELECT create_reference_table('ref_fx_rate');

-- Bookkeeping stays on the coordinator (local tables): run, run_source, file_state, quarantine,
-- change_log, schema_migration, finding, finding_run, rule_run.

-- Distributed tables: every Apple and backend fact, co-located on transaction_id.
-- Citus requires the distribution column in every primary key and unique constraint.
ALTER TABLE apple_transaction DROP CONSTRAINT apple_transaction_pkey;
ALTER TABLE apple_transaction ADD PRIMARY KEY (transaction_id);
SELECT create_distributed_table('apple_transaction', 'transaction_id');

ALTER TABLE apple_sighting DROP CONSTRAINT apple_sighting_pkey;
ALTER TABLE apple_sighting ADD PRIMARY KEY (transaction_id, sighting_id);
SELECT create_distributed_table('apple_sighting', 'transaction_id', colocate_with => 'apple_transaction');

-- Orders and credits without a transaction id (pending orders, unconfirmed credits) need a non-NULL
-- key: the backend exports them with transaction_id = '' or the ingest maps them to 'order:<order_id>'.
ALTER TABLE backend_order DROP CONSTRAINT backend_order_pkey;
ALTER TABLE backend_order ALTER COLUMN transaction_id SET DEFAULT '';
UPDATE backend_order SET transaction_id = '' WHERE transaction_id IS NULL;
ALTER TABLE backend_order ADD PRIMARY KEY (transaction_id, order_id);
SELECT create_distributed_table('backend_order', 'transaction_id', colocate_with => 'apple_transaction');

ALTER TABLE credit DROP CONSTRAINT credit_pkey;
UPDATE credit SET transaction_id = '' WHERE transaction_id IS NULL;
ALTER TABLE credit ADD PRIMARY KEY (transaction_id, credit_id);
SELECT create_distributed_table('credit', 'transaction_id', colocate_with => 'apple_transaction');

ALTER TABLE notification DROP CONSTRAINT notification_pkey;
UPDATE notification SET transaction_id = '' WHERE transaction_id IS NULL;
ALTER TABLE notification ADD PRIMARY KEY (transaction_id, notification_uuid);
SELECT create_distributed_table('notification', 'transaction_id', colocate_with => 'apple_transaction');

-- Storefront-level aggregates are two-stage: per storefront and day on the shards, then summed.
CREATE VIEW storefront_day AS
    SELECT storefront, purchase_date / 86400000 AS day, currency, COUNT(*) AS purchases, SUM(price) AS price_total
    FROM apple_transaction
    WHERE storefront IS NOT NULL AND purchase_date IS NOT NULL
    GROUP BY storefront, purchase_date / 86400000, currency;
