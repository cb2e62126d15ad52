# websearch-like, percentages
0 0
10000 15
20000,20
1e6	60
3e7 100
