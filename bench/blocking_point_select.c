// The blocking design without sysbench's Lua: one OS thread per connection, each
// executing libmariadb prepared point selects (ids: 75 % in the first 1 %, roughly
// sysbench's default `special` distribution) until the time is up. A reference for
// what a thread-per-connection client costs the client and the server (docs/PERFORMANCE.md).
// Build: apt-get install libmariadb-dev; gcc -O2 -o /tmp/bps bench/blocking_point_select.c $(mariadb_config --cflags --libs) -lpthread
// Run:   /tmp/bps SOCKET SECONDS THREADS   (tables sbtest1..8 x 250,000 rows, user root)
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static const char *sock; static int secs; static long counts[64];
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void *run(void *arg){ long i=(long)arg; MYSQL *m=mysql_init(0);
  if(!mysql_real_connect(m,0,"root",0,"sbtest",0,sock,0)){fprintf(stderr,"%s\n",mysql_error(m));exit(1);}
  MYSQL_STMT *st[8]; char q[128];
  for(int t=0;t<8;t++){st[t]=mysql_stmt_init(m); snprintf(q,sizeof q,"SELECT c FROM sbtest%d WHERE id=?",t+1); if(mysql_stmt_prepare(st[t],q,strlen(q))){fprintf(stderr,"%s\n",mysql_error(m));exit(1);} }
  int id; MYSQL_BIND b; memset(&b,0,sizeof b); b.buffer_type=MYSQL_TYPE_LONG; b.buffer=&id;
  char c[121]; unsigned long len; MYSQL_BIND r; memset(&r,0,sizeof r); r.buffer_type=MYSQL_TYPE_STRING; r.buffer=c; r.buffer_length=121; r.length=&len;
  for(int t=0;t<8;t++){mysql_stmt_bind_param(st[t],&b); mysql_stmt_bind_result(st[t],&r);}
  unsigned seed=i*7919+1; double end=now()+secs; long n=0;
  while(now()<end){ int t=rand_r(&seed)%8; id=(rand_r(&seed)%100<75)? rand_r(&seed)%2500+1 : rand_r(&seed)%250000+1;
    if(mysql_stmt_execute(st[t])){fprintf(stderr,"%s\n",mysql_stmt_error(st[t]));exit(1);}
    while(mysql_stmt_fetch(st[t])==0){} n++; }
  counts[i]=n; return 0; }
int main(int argc,char**argv){ sock=argv[1]; secs=atoi(argv[2]); int th=atoi(argv[3]); pthread_t p[64];
  for(long i=0;i<th;i++) pthread_create(&p[i],0,run,(void*)i);
  long tot=0; for(int i=0;i<th;i++){pthread_join(p[i],0); tot+=counts[i];} printf("transactions %ld\n",tot); return 0; }
