% Times the authors' BP-means (github.com/tbroderick/bp-means, GPLv3, not part of this
% repository) on a matrix, as their find_picture_features.m runs it: for each restart, a
% random permutation of the rows, bp_means_plus_plus, then bp_means; the best objective kept.
%
%   OMP_NUM_THREADS=1 octave-cli --no-gui -q bench/bp_means_authors.m CODE_DIR X.csv LAMBDA_SQ RESTARTS SEED
%
% CODE_DIR is the checkout's code/ folder; X.csv the N x D matrix (bench/tabletop_pca.py's
% output written as CSV). Prints one JSON line: restarts, best objective, its K, the wall
% and CPU time of all restarts, and the CPU time per restart in ms.
args = argv();
if numel(args) != 5
  fprintf(2, 'usage: bp_means_authors.m CODE_DIR X.csv LAMBDA_SQ RESTARTS SEED\n');
  exit(2);
end
warning('off', 'all');
pkg load statistics  % randsample, which bp_means_plus_plus calls (Debian: octave-statistics)
addpath(args{1});
X = csvread(args{2});
lambda_sq = str2double(args{3});
restarts = str2double(args{4});
rand('seed', str2double(args{5}));
[N, D] = size(X);
best = Inf;
best_k = 0;
wall = tic;
cpu = cputime;
for r = 1:restarts
  order = randperm(N);
  [Z0, A0] = bp_means_plus_plus(X(order, :), lambda_sq, Inf, false);
  [Z, A, obj] = bp_means(X(order, :), Z0, A0, lambda_sq, Inf, 10000, false);
  if obj < best
    best = obj;
    best_k = size(Z, 2);
  end
end
cpu = cputime - cpu;
wall = toc(wall);
fprintf('{"peer":"authors bp_means (Octave %s)","n":%d,"d":%d,"penalty":%g,"restarts":%d,"objective":%.4f,"k":%d,"wall_s":%.3f,"cpu_s":%.3f,"cpu_ms_per_run":%.3f}\n', ...
        OCTAVE_VERSION, N, D, lambda_sq, restarts, best, best_k, wall, cpu, 1000 * cpu / restarts);
