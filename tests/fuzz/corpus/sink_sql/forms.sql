-- c
create table "a""b" (`l` string) /* x */ WITH ('connector'='s3', bucket='file:///tmp/x', part_size=5242880, rollover_interval='1m', key_prefix='it''s');;
